// `--model org/name` from the local Hugging Face hub cache: repo-id
// validation, the cache root from the environment, refs and snapshots, links
// into blobs/, hostile links, and load_model preferring cached files over the
// catalogue. Every cache here is a folder built in a temporary directory.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../test_support.hpp"

import hwaccel;

namespace {

using namespace hwaccel;
namespace fs = std::filesystem;
using hwaccel::testing::TempDir;
using hwaccel::testing::write_file;

bool contains(std::string_view haystack, std::string_view needle) { return haystack.find(needle) != std::string_view::npos; }

// Sets (or, with nullopt, unsets) environment variables for one test and
// restores them after. Tests run one at a time: nothing else reads them then.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, std::optional<std::string>>> vars) {
    for (const auto& [name, value] : vars) set(name, value);
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) ::setenv(it->first.c_str(), it->second->c_str(), 1);
      else ::unsetenv(it->first.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

  void set(const char* name, const std::optional<std::string>& value) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// HF_HUB_CACHE = root, every other variable that could name a cache unset.
std::unique_ptr<ScopedEnv> hub_cache_env(const fs::path& root) {
  return std::make_unique<ScopedEnv>(
      std::initializer_list<std::pair<const char*, std::optional<std::string>>>{{"HF_HUB_CACHE", root.string()},
                                                                               {"HUGGINGFACE_HUB_CACHE", std::nullopt},
                                                                               {"HF_HOME", std::nullopt},
                                                                               {"XDG_CACHE_HOME", std::nullopt}});
}

// --- model files --------------------------------------------------------------

using StTensor = hwaccel::testing::SafetensorsTensor;
using hwaccel::testing::write_safetensors;

// A two-layer Llama-shaped model: config.json and model.safetensors.
constexpr const char* tiny_config = R"({"model_type":"llama","num_hidden_layers":2,"hidden_size":256,
  "num_attention_heads":4,"num_key_value_heads":2,"intermediate_size":512,"vocab_size":1000,
  "tie_word_embeddings":false,"max_position_embeddings":2048})";

void write_tiny_model(const fs::path& dir) {
  write_file(dir / "config.json", tiny_config);
  std::vector<StTensor> t{{"model.embed_tokens.weight", "BF16", {1000, 256}}};
  for (int l = 0; l < 2; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    for (const char* norm : {"input_layernorm.weight", "post_attention_layernorm.weight"}) t.push_back({p + norm, "BF16", {256}});
    t.push_back({p + "self_attn.q_proj.weight", "BF16", {256, 256}});
    t.push_back({p + "self_attn.k_proj.weight", "BF16", {128, 256}});
    t.push_back({p + "self_attn.v_proj.weight", "BF16", {128, 256}});
    t.push_back({p + "self_attn.o_proj.weight", "BF16", {256, 256}});
    t.push_back({p + "mlp.gate_proj.weight", "BF16", {512, 256}});
    t.push_back({p + "mlp.up_proj.weight", "BF16", {512, 256}});
    t.push_back({p + "mlp.down_proj.weight", "BF16", {256, 512}});
  }
  t.push_back({"model.norm.weight", "BF16", {256}});
  t.push_back({"lm_head.weight", "BF16", {1000, 256}});
  write_safetensors(dir / "model.safetensors", t);
}

// Another architecture, config.json only: Llama 2 7B.
constexpr const char* llama2_7b_config = R"({"model_type":"llama","hidden_size":4096,"intermediate_size":11008,
  "num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":32,"vocab_size":32000,
  "tie_word_embeddings":false,"max_position_embeddings":4096})";
constexpr std::uint64_t llama2_7b_params = 6'738'415'616u;

// --- a hub cache as huggingface_hub lays it out ---------------------------------

const std::string commit_a(40, 'a');
const std::string commit_b = "b" + std::string(39, '1');

class HubRepo {
 public:
  HubRepo(const fs::path& root, std::string_view org, std::string_view name)
      : dir_(root / ("models--" + std::string(org) + "--" + std::string(name))) {
    fs::create_directories(dir_ / "blobs");
  }
  const fs::path& dir() const { return dir_; }
  fs::path snapshot(const std::string& commit) const { return dir_ / "snapshots" / commit; }

  // `content` as a blob, linked from snapshots/<commit>/<file> as ../../blobs/<hash>.
  void add(const std::string& commit, const std::string& file, std::string_view content) {
    const std::string blob = "blob" + std::to_string(next_++);
    write_file(dir_ / "blobs" / blob, content);
    fs::create_directories(snapshot(commit));
    fs::create_symlink(fs::path("..") / ".." / "blobs" / blob, snapshot(commit) / file);
  }
  // Every file of a plain model folder, into snapshot `commit`.
  void add_folder(const std::string& commit, const fs::path& folder) {
    for (const auto& e : fs::directory_iterator(folder))
      add(commit, e.path().filename().string(), hwaccel::testing::read_file(e.path()));
  }
  void ref(const std::string& name, const std::string& commit) { write_file(dir_ / "refs" / name, commit); }

 private:
  fs::path dir_;
  int next_ = 0;
};

// --- repo ids ---------------------------------------------------------------------

TEST(HfCache, RepoIdsAreValidated) {
  const auto id = parse_hf_repo_id("meta-llama/Llama-3.1-8B").value();
  EXPECT_EQ(id.org, "meta-llama");
  EXPECT_EQ(id.name, "Llama-3.1-8B");
  EXPECT_EQ(id.revision, "main");
  EXPECT_FALSE(id.revision_given);
  EXPECT_EQ(id.cache_folder(), "models--meta-llama--Llama-3.1-8B");
  const auto pinned = parse_hf_repo_id("Qwen/Qwen2.5_7B@v1.0").value();
  EXPECT_EQ(pinned.revision, "v1.0");
  EXPECT_TRUE(pinned.revision_given);
  EXPECT_EQ(parse_hf_repo_id("a/b@" + commit_a).value().revision, commit_a);

  const std::vector<std::string> bad_ids{
      "", "noslash", "a/b/c", "/abs/path", "/name", "org/", "a\\b/c", "org/na\\me", "../x", "org/..", "org/.",
      "org/a..b", "a--b/c", "org/-x", "org/x.", "org/na me", "org/name@", "org/name@refs/pr/1", "org/name@..",
      "org/name@-x", "org/name@a@b", "ünï/cödé", "org/name\n", std::string("org/na\0me", 9),
      "org/" + std::string(97, 'x'), std::string(200, 'a') + "/" + std::string(200, 'b')};
  for (const auto& bad : bad_ids) {
    const auto r = parse_hf_repo_id(bad);
    ASSERT_FALSE(r) << "accepted '" << bad << "'";
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_input) << bad;
    EXPECT_TRUE(contains(r.error().message, "not a Hugging Face repo id")) << r.error().message;
  }
  EXPECT_TRUE(parse_hf_repo_id("org/" + std::string(96, 'x')));
}

// --- the cache root -----------------------------------------------------------------

TEST(HfCache, RootFollowsHuggingfaceHubOrder) {
  std::map<std::string, std::string, std::less<>> env;
  const EnvLookup lookup = [&](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  EXPECT_FALSE(hf_hub_cache_root(lookup));
  env["HOME"] = "/home/u";
  EXPECT_EQ(hf_hub_cache_root(lookup)->path, fs::path("/home/u/.cache/huggingface/hub"));
  EXPECT_EQ(hf_hub_cache_root(lookup)->from, "HOME");
  env["XDG_CACHE_HOME"] = "/xdg";
  EXPECT_EQ(hf_hub_cache_root(lookup)->path, fs::path("/xdg/huggingface/hub"));
  env["HF_HOME"] = "~/hf";
  EXPECT_EQ(hf_hub_cache_root(lookup)->path, fs::path("/home/u/hf/hub"));
  EXPECT_EQ(hf_hub_cache_root(lookup)->from, "HF_HOME");
  env["HUGGINGFACE_HUB_CACHE"] = "/legacy";
  EXPECT_EQ(hf_hub_cache_root(lookup)->path, fs::path("/legacy"));
  env["HF_HUB_CACHE"] = "/hub";
  EXPECT_EQ(hf_hub_cache_root(lookup)->path, fs::path("/hub"));
  EXPECT_EQ(hf_hub_cache_root(lookup)->from, "HF_HUB_CACHE");
  env["HF_HUB_CACHE"] = "";  // empty counts as unset
  EXPECT_EQ(hf_hub_cache_root(lookup)->from, "HUGGINGFACE_HUB_CACHE");
  EXPECT_FALSE(hf_hub_cache_root(EnvLookup{}));
}

TEST(HfCache, HubCacheVariableWinsOverHfHome) {
  TempDir tmp;
  const fs::path hub = tmp.path() / "hub-cache", home = tmp.path() / "hf-home";
  fs::create_directories(hub);
  HubRepo repo(home / "hub", "acme", "tiny");
  repo.add(commit_a, "config.json", llama2_7b_config);
  repo.ref("main", commit_a);
  ScopedEnv env{{"HF_HUB_CACHE", hub.string()},
                {"HUGGINGFACE_HUB_CACHE", std::nullopt},
                {"HF_HOME", home.string()},
                {"XDG_CACHE_HOME", std::nullopt}};
  const auto missing = load_model("acme/tiny");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
  EXPECT_TRUE(contains(missing.error().message, hub.string())) << missing.error().message;
  EXPECT_TRUE(contains(missing.error().message, "HF_HUB_CACHE")) << missing.error().message;
  env.set("HF_HUB_CACHE", std::nullopt);
  EXPECT_EQ(hf_hub_cache_root()->path, home / "hub");
  EXPECT_EQ(load_model("acme/tiny").value().parameters, llama2_7b_params);
}

// --- snapshots ----------------------------------------------------------------------

TEST(HfCache, RefsMainGivesTheSnapshotThroughBlobLinks) {
  TempDir tmp;
  write_tiny_model(tmp.path() / "plain");
  HubRepo repo(tmp.path() / "hub", "acme", "tiny-llama");
  repo.add_folder(commit_a, tmp.path() / "plain");
  repo.ref("main", commit_a);
  ASSERT_TRUE(fs::is_symlink(repo.snapshot(commit_a) / "model.safetensors"));
  const auto env = hub_cache_env(tmp.path() / "hub");

  EXPECT_EQ(find_hf_snapshot(parse_hf_repo_id("acme/tiny-llama").value(), tmp.path() / "hub").value(),
            repo.snapshot(commit_a));
  const auto cached = load_model("acme/tiny-llama").value();
  const auto plain = load_model((tmp.path() / "plain").string()).value();
  EXPECT_EQ(cached.source, ModelSource::safetensors);
  EXPECT_EQ(cached.parameters, plain.parameters);
  EXPECT_EQ(cached.active_parameters, plain.active_parameters);
  EXPECT_EQ(cached.architecture, plain.architecture);
  EXPECT_EQ(cached.stored, plain.stored);
  EXPECT_TRUE(cached.exact_parameters);
  EXPECT_EQ(cached.name, "acme/tiny-llama");
  ASSERT_FALSE(cached.notes.empty());
  EXPECT_TRUE(contains(cached.notes.front(), "Hugging Face cache")) << cached.notes.front();
  // Planning works on it like on any model.
  EXPECT_TRUE(weight_layout(cached, QuantizationLevel::bf16));
}

TEST(HfCache, RevisionByRefByHashAndByPrefix) {
  TempDir tmp;
  write_tiny_model(tmp.path() / "plain");
  HubRepo repo(tmp.path() / "hub", "acme", "two");
  repo.add_folder(commit_a, tmp.path() / "plain");
  repo.add(commit_b, "config.json", llama2_7b_config);
  repo.ref("main", commit_a);
  repo.ref("v2", commit_b + "\n");  // huggingface_hub writes no newline; a trailing one is tolerated
  const auto env = hub_cache_env(tmp.path() / "hub");
  const auto tiny = load_model((tmp.path() / "plain").string()).value().parameters;

  EXPECT_EQ(load_model("acme/two").value().parameters, tiny);
  EXPECT_EQ(load_model("acme/two@main").value().parameters, tiny);
  EXPECT_EQ(load_model("acme/two@v2").value().parameters, llama2_7b_params);
  EXPECT_EQ(load_model("acme/two@v2").value().name, "acme/two@v2");
  EXPECT_EQ(load_model("acme/two@" + commit_b).value().parameters, llama2_7b_params);
  EXPECT_EQ(load_model("acme/two@" + commit_a).value().parameters, tiny);
  EXPECT_EQ(load_model("acme/two@" + commit_b.substr(0, 8)).value().parameters, llama2_7b_params);
  const auto nope = load_model("acme/two@v3");
  ASSERT_FALSE(nope);
  EXPECT_EQ(nope.error().kind, ErrorKind::not_found);
  EXPECT_TRUE(contains(nope.error().message, "v3")) << nope.error().message;
  EXPECT_TRUE(contains(nope.error().message, "--revision v3")) << nope.error().message;

  // A ref that does not hold a commit hash, and one pointing at a missing snapshot.
  repo.ref("bad", "../../etc");
  EXPECT_EQ(load_model("acme/two@bad").error().kind, ErrorKind::parse_error);
  repo.ref("gone", std::string(40, 'c'));
  const auto gone = load_model("acme/two@gone");
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().kind, ErrorKind::not_found);
  EXPECT_TRUE(contains(gone.error().message, "no snapshot folder")) << gone.error().message;
}

TEST(HfCache, WithoutRefsMainOneSnapshotIsUsedSeveralAreAnError) {
  TempDir tmp;
  HubRepo repo(tmp.path() / "hub", "acme", "unref");
  repo.add(commit_b, "config.json", llama2_7b_config);
  const auto env = hub_cache_env(tmp.path() / "hub");
  EXPECT_EQ(load_model("acme/unref").value().parameters, llama2_7b_params);
  repo.add(commit_a, "config.json", llama2_7b_config);
  const auto several = load_model("acme/unref");
  ASSERT_FALSE(several);
  EXPECT_EQ(several.error().kind, ErrorKind::invalid_input);
  EXPECT_TRUE(contains(several.error().message, commit_a)) << several.error().message;
  EXPECT_TRUE(contains(several.error().message, commit_b)) << several.error().message;
  EXPECT_TRUE(contains(several.error().message, "acme/unref@")) << several.error().message;
  // A revision settles it.
  EXPECT_EQ(load_model("acme/unref@" + commit_a).value().parameters, llama2_7b_params);
}

TEST(HfCache, MissingRepoNamesTheRootAndHowToFetchIt) {
  TempDir tmp;
  fs::create_directories(tmp.path() / "hub");
  const auto env = hub_cache_env(tmp.path() / "hub");
  const auto r = load_model("acme/not-here");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::not_found);
  const auto& m = r.error().message;
  EXPECT_TRUE(contains(m, "acme/not-here")) << m;
  EXPECT_TRUE(contains(m, (tmp.path() / "hub").string())) << m;
  EXPECT_TRUE(contains(m, "hf download acme/not-here")) << m;
  EXPECT_TRUE(contains(m, "huggingface-cli download acme/not-here")) << m;
  EXPECT_TRUE(contains(m, "network")) << m;
  // The cache root need not exist at all.
  const auto nowhere = hub_cache_env(tmp.path() / "no-such-root");
  EXPECT_EQ(load_model("acme/not-here").error().kind, ErrorKind::not_found);
  // An empty repo folder, and one whose snapshot lacks any model file.
  HubRepo empty(tmp.path() / "no-such-root", "acme", "empty");
  EXPECT_EQ(load_model("acme/empty").error().kind, ErrorKind::not_found);
  HubRepo readme(tmp.path() / "no-such-root", "acme", "readme");
  readme.add(commit_a, "README.md", "# nothing to plan");
  readme.ref("main", commit_a);
  const auto no_model = load_model("acme/readme");
  ASSERT_FALSE(no_model);
  EXPECT_EQ(no_model.error().kind, ErrorKind::invalid_input);
  EXPECT_TRUE(contains(no_model.error().message, readme.snapshot(commit_a).string())) << no_model.error().message;
  EXPECT_TRUE(contains(no_model.error().message, "config.json")) << no_model.error().message;
}

TEST(HfCache, GgufRepoWithSeveralFilesNamesThem) {
  TempDir tmp;
  HubRepo repo(tmp.path() / "hub", "acme", "tiny-GGUF");
  repo.add(commit_a, "tiny.Q4_K_M.gguf", "GGUF");
  repo.add(commit_a, "tiny.Q8_0.gguf", "GGUF");
  repo.ref("main", commit_a);
  const auto env = hub_cache_env(tmp.path() / "hub");
  const auto r = load_model("acme/tiny-GGUF");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
  EXPECT_TRUE(contains(r.error().message, "tiny.Q4_K_M.gguf")) << r.error().message;
  EXPECT_TRUE(contains(r.error().message, "tiny.Q8_0.gguf")) << r.error().message;
}

// --- a hostile cache ---------------------------------------------------------------

TEST(HfCache, LinksOutOfTheRepoAreRefused) {
  TempDir tmp;
  const fs::path root = tmp.path() / "hub";
  write_file(tmp.path() / "outside" / "config.json", llama2_7b_config);
  const auto env = hub_cache_env(root);

  // A snapshot file linking out of the cache.
  HubRepo evil(root, "acme", "evil");
  fs::create_directories(evil.snapshot(commit_a));
  fs::create_symlink(tmp.path() / "outside" / "config.json", evil.snapshot(commit_a) / "config.json");
  evil.ref("main", commit_a);
  const auto r = load_model("acme/evil");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::escapes_root);
  EXPECT_TRUE(contains(r.error().message, "outside")) << r.error().message;

  // Relative, into another repo of the same cache.
  HubRepo other(root, "acme", "other");
  other.add(commit_a, "config.json", llama2_7b_config);
  HubRepo sneaky(root, "acme", "sneaky");
  fs::create_directories(sneaky.snapshot(commit_a));
  fs::create_symlink("../../../models--acme--other/blobs/blob0", sneaky.snapshot(commit_a) / "config.json");
  EXPECT_EQ(load_model("acme/sneaky").error().kind, ErrorKind::escapes_root);

  // A link the planner would not read is refused too: the snapshot is not a cache's.
  HubRepo readme(root, "acme", "readme");
  readme.add(commit_a, "config.json", llama2_7b_config);
  fs::create_symlink("/etc/hostname", readme.snapshot(commit_a) / "README.md");
  EXPECT_EQ(load_model("acme/readme").error().kind, ErrorKind::escapes_root);

  // The snapshot folder itself a link out.
  HubRepo moved(root, "acme", "moved");
  fs::create_directories(moved.dir() / "snapshots");
  fs::create_directory_symlink(tmp.path() / "outside", moved.snapshot(commit_a));
  EXPECT_EQ(load_model("acme/moved").error().kind, ErrorKind::escapes_root);

  // A link to a blob that is not there: an interrupted download.
  HubRepo partial(root, "acme", "partial");
  fs::create_directories(partial.snapshot(commit_a));
  fs::create_symlink("../../blobs/missing", partial.snapshot(commit_a) / "config.json");
  const auto p = load_model("acme/partial");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().kind, ErrorKind::not_found);
  EXPECT_TRUE(contains(p.error().message, "interrupted")) << p.error().message;

  // A ref that is a link, not a file.
  HubRepo linked_ref(root, "acme", "linked-ref");
  linked_ref.add(commit_a, "config.json", llama2_7b_config);
  fs::create_directories(linked_ref.dir() / "refs");
  fs::create_symlink(tmp.path() / "outside" / "config.json", linked_ref.dir() / "refs" / "main");
  EXPECT_EQ(load_model("acme/linked-ref").error().kind, ErrorKind::not_regular_file);
}

TEST(HfCache, BadNamesAreInvalidInputAndPathsStayPaths) {
  TempDir tmp;
  const auto env = hub_cache_env(tmp.path() / "hub");
  for (const char* bad : {"org/na me", "org/..", "a\\b/c", "org/", "org/name@", "org/name@x/y", "a--b/c"}) {
    const auto r = load_model(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_input) << bad << ": " << r.error().message;
  }
  EXPECT_EQ(load_model("org/name@x/y").error().kind, ErrorKind::invalid_input);
  // Written as paths (absolute, relative with ./ or several '/'): a missing file, as before.
  for (const char* path : {"/nonexistent/model.gguf", "./org/name", "models/org/name.gguf", "~/x/y"}) {
    const auto r = load_model(path);
    ASSERT_FALSE(r) << path;
    EXPECT_EQ(r.error().kind, ErrorKind::not_found) << path;
    EXPECT_TRUE(contains(r.error().message, "neither a file nor a catalogue model")) << r.error().message;
  }
  EXPECT_FALSE(fs::exists(tmp.path() / "hub"));
}

// --- the catalogue ---------------------------------------------------------------------

TEST(HfCache, CatalogueFirstButCachedFilesWin) {
  TempDir tmp;
  const fs::path root = tmp.path() / "hub";
  const auto env = hub_cache_env(root);
  // A catalogue id never looks in the cache; a catalogue repo not in the cache is the catalogue's.
  EXPECT_EQ(load_model("llama-3.1-8b").value().source, ModelSource::catalogue);
  EXPECT_EQ(load_model("meta-llama/Llama-3.1-8B").value().source, ModelSource::catalogue);
  // In the cache: its own files.
  write_tiny_model(tmp.path() / "plain");
  HubRepo repo(root, "meta-llama", "Llama-3.1-8B");
  repo.add_folder(commit_a, tmp.path() / "plain");
  repo.ref("main", commit_a);
  const auto cached = load_model("meta-llama/Llama-3.1-8B").value();
  EXPECT_EQ(cached.source, ModelSource::safetensors);
  EXPECT_EQ(cached.parameters, load_model((tmp.path() / "plain").string()).value().parameters);
  // A cached copy that cannot be used: the catalogue, with a note saying why.
  fs::remove(repo.snapshot(commit_a) / "config.json");
  fs::create_symlink("/etc/hostname", repo.snapshot(commit_a) / "config.json");
  const auto fallback = load_model("meta-llama/Llama-3.1-8B").value();
  EXPECT_EQ(fallback.source, ModelSource::catalogue);
  ASSERT_FALSE(fallback.notes.empty());
  EXPECT_TRUE(contains(fallback.notes.back(), "not used")) << fallback.notes.back();
  // ... but asked for by revision, the cache's error stands.
  EXPECT_EQ(load_model("meta-llama/Llama-3.1-8B@main").error().kind, ErrorKind::escapes_root);
}

}  // namespace
