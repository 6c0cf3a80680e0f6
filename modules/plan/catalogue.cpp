// The model catalogue: published config.json values of widely used open
// models, read from data/models.json (compiled in) through the reader of a
// user's config.json, so that a catalogue id and the model's own config.json
// plan alike.
module;
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include "threads.hpp"
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.plan;
import :internals;
import hwaccel.json_fields;

namespace hwaccel {
namespace {

// The catalogue is a few tens of kilobytes; this bounds what a hostile file costs.
constexpr std::size_t max_model_catalogue_bytes = 4 << 20;

constexpr std::array catalogue_file_fields = {
    json::Field::text("format", json::required),
    json::Field::whole("version", 0, UINT64_MAX, json::required),
    json::Field::text("description"),
    json::Field::array("models", json::Type::object, 4096, json::required),
};

constexpr std::array catalogue_entry_fields = {
    json::Field::text("id", json::required, 64),
    json::Field::text("name", json::required, 128),
    json::Field::text("hf_repo", json::required, 256),
    json::Field::array("aliases", json::Type::text, 16, json::Need::optional, 0, 64),
    json::Field::text("source", json::required),
    json::Field::object("config", json::required),
};

// Every name an entry answers to: its id, its repository with and without
// the organisation, its aliases.
template <class Aliases>
std::vector<std::string_view> names_of(std::string_view id, std::string_view repo, const Aliases& aliases) {
  std::vector<std::string_view> names{id, repo};
  if (const auto slash = repo.find('/'); slash != std::string_view::npos) names.push_back(repo.substr(slash + 1));
  for (const auto& alias : aliases) names.push_back(alias);
  return names;
}

std::vector<std::string_view> names_of(const CatalogueEntry& e) { return names_of(e.id, e.hf_repo, e.aliases); }



// One entry of a catalogue file, checked on its own: its fields and its
// config (read as a user's config.json is) make a model.
Result<CatalogueEntry> read_catalogue_entry(json::Value value, std::string_view origin, std::size_t index) {
  const std::string where = json::entry_where(origin, "models", index, value, "id");
  auto o = json::Object::read(value, catalogue_entry_fields, where);
  if (!o) return fail(o.error());
  auto config = config_detail::architecture_of_config(*o->value("config"), text::cat(where, ": config"));
  if (!config) return fail(config.error());
  CatalogueEntry e;
  e.id = std::string(o->text("id"));
  e.display_name = std::string(o->text("name"));
  e.hf_repo = std::string(o->text("hf_repo"));
  for (const auto alias : o->texts("aliases")) e.aliases.emplace_back(alias);
  e.source = std::string(o->text("source"));
  e.family = config->architecture.family;
  e.architecture = std::move(config->architecture);
  e.native_quantization = config->native_level;
  // The notes a user's config.json gets (defaults assumed, fields not
  // counted) are the entry's source text's to say.
  if (auto d = ModelDescription::from_architecture(e.id, e.architecture); !d)
    return fail(o->error("config", d.error().message));
  return e;
}

constexpr std::string_view builtin_origin = "built-in models.json";

// The built-in catalogue read an entry at a time. A plan names one model, and
// reading every entry's config would cost such a process more than all its
// other reading; so the names of every entry are read at first use, and an
// entry's config when it is asked for (and kept). The file's own checks
// (every entry, no name twice) are parse_model_catalogue's, which
// catalogue() runs when the whole list is asked for, and the tests run on
// the built-in file.
class LazyCatalogue {
 public:
  static LazyCatalogue& builtin() {
    static LazyCatalogue instance;
    return instance;
  }

  // The entry whose id is `key`, else the first that answers to it.
  const CatalogueEntry* find(std::string_view key) {
    for (std::size_t i = 0; i < names_.size(); ++i)
      if (names_[i].front() == key) return &entry(i);
    for (std::size_t i = 0; i < names_.size(); ++i)
      for (const auto name : names_[i])
        if (text::same_identifier(name, key)) return &entry(i);
    return nullptr;
  }

 private:
  LazyCatalogue()
      : file_(builtin_or_abort(json::read_data_file(builtin_model_catalogue_json(), builtin_origin,
                                                    {"hwaccel-models", max_model_catalogue_bytes, "a model catalogue"},
                                                    catalogue_file_fields),
                               "model catalogue")),
        values_(file_.root.values("models")) {
    names_.reserve(values_.size());
    for (const auto& value : values_) {
      const auto text_of = [&](std::string_view key) {
        const auto member = value.member(key);
        return member ? text::trim(member->string()) : std::string_view();
      };
      std::vector<std::string_view> aliases;
      if (const auto listed = value.member("aliases"))
        for (const auto& alias : listed->elements()) aliases.push_back(text::trim(alias.string()));
      names_.push_back(names_of(text_of("id"), text_of("hf_repo"), aliases));
    }
    entries_.resize(values_.size());
    read_.resize(values_.size());
  }

 public:
  // Every entry, in the file's order.
  const std::vector<CatalogueEntry>& all() {
    const std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < entries_.size(); ++i) read_locked(i);
    return entries_;
  }

 private:
  const CatalogueEntry& entry(std::size_t i) {
    const std::lock_guard lock(mutex_);
    read_locked(i);
    return entries_[i];
  }

  void read_locked(std::size_t i) {
    if (read_[i]) return;
    entries_[i] = builtin_or_abort(read_catalogue_entry(values_[i], builtin_origin, i), "model catalogue");
    read_[i] = true;
  }

  json::DataFile file_;
  std::vector<json::Value> values_;
  std::vector<std::vector<std::string_view>> names_;  // per entry: its id first, then every name it answers to
  Mutex mutex_;
  // Sized once, so that an entry stays where it was read; an entry is read
  // (read_[i]) before anyone is given it.
  std::vector<CatalogueEntry> entries_;
  std::vector<bool> read_;
};

const std::vector<CatalogueEntry>& catalogue() noexcept { return LazyCatalogue::builtin().all(); }

}  // namespace

Result<std::vector<CatalogueEntry>> parse_model_catalogue(std::string_view json, std::string_view origin) {
  auto file = json::read_data_file(json, origin, {"hwaccel-models", max_model_catalogue_bytes, "a model catalogue"},
                                   catalogue_file_fields);
  if (!file) return fail(file.error());
  const json::Object& root = file->root;

  std::vector<CatalogueEntry> out;
  const auto entries = root.values("models");
  out.reserve(entries.size());
  std::map<std::string, std::size_t, std::less<>> owner;  // every name's key -> the entry it names
  for (std::size_t index = 0; index < entries.size(); ++index) {
    auto e = read_catalogue_entry(entries[index], origin, index);
    if (!e) return fail(e.error());
    for (const auto name : names_of(*e))
      if (const auto [it, inserted] = owner.try_emplace(text::identifier_key(name), out.size());
          !inserted && it->second != out.size())
        return fail(ErrorKind::invalid_input,
                    text::cat(json::entry_where(origin, "models", index, entries[index], "id"), ": \"", name,
                              "\" already names ", out[it->second].id));
    out.push_back(std::move(*e));
  }
  return out;
}

std::span<const CatalogueEntry> model_catalogue() noexcept { return catalogue(); }

const CatalogueEntry* find_catalogue_model(std::string_view name) noexcept {
  const std::string_view key = text::trim(name);
  if (key.empty()) return nullptr;
  return LazyCatalogue::builtin().find(key);
}

Result<ModelDescription> catalogue_model(std::string_view name) {
  const CatalogueEntry* e = find_catalogue_model(name);
  if (!e) {
    std::string ids;
    for (const auto& c : catalogue()) {
      if (!ids.empty()) ids += ", ";
      ids += c.id;
    }
    return fail(ErrorKind::invalid_input,
                text::cat("no catalogue model named '", text::excerpt(name), "' (see `hwaccel models`): ", ids));
  }
  auto d = ModelDescription::from_architecture(e->id, e->architecture);
  if (!d) return d;
  d->source = ModelSource::catalogue;
  d->origin = e->id;
  d->native_level = e->native_quantization;
  return d;
}

const CatalogueEntry& nearest_dense_model(std::uint64_t parameters) noexcept {
  const CatalogueEntry* best = &catalogue().front();
  double best_distance = INFINITY;
  const double target = std::log(static_cast<double>(parameters == 0 ? 1 : parameters));
  for (const auto& e : catalogue()) {
    if (e.architecture.moe.is_moe()) continue;
    const auto count = count_parameters(e.architecture);
    if (!count) continue;
    const double distance = std::abs(std::log(static_cast<double>(count->total)) - target);
    if (distance < best_distance) {
      best_distance = distance;
      best = &e;
    }
  }
  return *best;
}

std::string model_catalogue_json() {
  json::Writer w(false);
  w.begin_array();
  for (const auto& e : model_catalogue()) {
    const auto d = catalogue_model(e.id);
    if (!d) continue;
    const auto& a = d->architecture;
    w.begin_object();
    w.field("id", e.id).field("name", e.display_name).field("hf_repo", e.hf_repo).field("family", e.family);
    w.field("params", d->parameters).field("active_params", d->active_parameters);
    w.field("layers", a.layers).field("hidden_size", a.hidden_size).field("attention_heads", a.attention_heads);
    w.field("kv_heads", a.kv_heads).field("head_dim", a.head_dim).field("intermediate_size", a.intermediate_size);
    w.field("vocab_size", a.vocab_size).field("tied_embeddings", a.tied_embeddings);
    w.field("max_context", a.max_context);
    if (a.moe.is_moe()) w.field("experts", a.moe.experts).field("experts_per_token", a.moe.experts_per_token);
    w.field("attention", to_string(a.attention_kind()));
    if (a.sliding_window)
      w.field("sliding_window", *a.sliding_window).field("sliding_window_pattern", a.sliding_window_pattern);
    if (a.attention_chunk)
      w.field("attention_chunk_size", *a.attention_chunk).field("attention_chunk_pattern", a.attention_chunk_pattern);
    if (d->native_level) w.field("native_quantization", to_string(*d->native_level));
    w.field("source", e.source);
    w.end_object();
  }
  w.end_array();
  return std::string(w.str());
}

}  // namespace hwaccel
