// A whole machine as one text input (docs/fuzzing.md, "Machine text"), served
// by an in-memory System, so that fuzz targets can run the real detectors on
// mutated sysfs trees and tool outputs. Include after `import hwaccel;` with
// <map>, <memory>, <optional>, <string>, <string_view> and <vector> included
// before it: this header includes nothing itself.
#pragma once

namespace hwaccel::fuzz {

/// A machine held in memory: files, folders, links, special nodes,
/// environment, tools and captured runs. Read-only once built, so every
/// method is safe from several threads at once.
class MemorySystem final : public System {
 public:
  /// Decodes machine text. Never fails: records it cannot use are skipped.
  static std::unique_ptr<MemorySystem> decode(std::string_view text);

  Result<FileContent> read_file(std::string_view path, std::size_t max_bytes = default_read_cap) const override;
  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override;
  Result<std::string> read_link(std::string_view path) const override;
  Result<FileStatus> status(std::string_view path, bool follow_symlinks = true) const override;
  std::optional<std::string> env(std::string_view name) const override;
  std::optional<std::string> find_tool(std::string_view name) const override;
  Result<ToolResult> run(const ToolRequest& request) const override;

  struct Node {
    FileType type = FileType::directory;
    std::string content;  ///< file bytes, or link target
  };
  struct Run {
    std::vector<std::string> argv;
    std::string out;
    std::string err;
    int exit = 0;
    std::optional<int> signal;
    bool hang = false;
  };

 private:
  /// The node key ("/a/b") `path` leads to, following links like the kernel
  /// (at most 40 of them; ".." at the root stays at the root).
  Result<std::string> resolve(std::string_view path, bool follow_last) const;
  void add(std::string_view path, Node node);

  std::map<std::string, Node, std::less<>> nodes_;  ///< by normalised path; "/" is implied
  std::map<std::string, std::string, std::less<>> env_;
  std::vector<std::string> tools_;
  std::vector<Run> runs_;
  /// Bytes before the first record: when present, every tool exists and any
  /// run without a captured answer prints them.
  std::string preamble_;
};

}  // namespace hwaccel::fuzz
