// What the GGUF and safetensors readers share: a regular file read at
// offsets, and the tallies of a model's tensors. Included right after
// `module hwaccel.plan;` by the model-file units; functions are inline, since
// several units of the module include it (and a member function defined in
// its class is not implicitly inline in a module unit).
#pragma once

namespace hwaccel::model_files {

class BinaryFile {
 public:
  static inline Result<BinaryFile> open(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      const int e = errno;
      const ErrorKind kind = e == ENOENT ? ErrorKind::not_found : e == EACCES ? ErrorKind::permission_denied : ErrorKind::io_error;
      return fail(kind, text::cat("cannot open ", path.string(), ": ", std::strerror(e)));
    }
    BinaryFile f(fd, path.string());
    struct stat st {};
    if (::fstat(fd, &st) != 0) return fail(ErrorKind::io_error, text::cat("cannot stat ", path.string()));
    // A FIFO or device would block or never end: only regular files are read.
    if (!S_ISREG(st.st_mode)) return fail(ErrorKind::not_regular_file, text::cat(path.string(), " is not a regular file"));
    f.size_ = static_cast<std::uint64_t>(st.st_size);
    return f;
  }
  inline BinaryFile(BinaryFile&& o) noexcept : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)), size_(o.size_) {}
  BinaryFile& operator=(BinaryFile&&) = delete;
  BinaryFile(const BinaryFile&) = delete;
  inline ~BinaryFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  inline std::uint64_t size() const noexcept { return size_; }
  inline const std::string& path() const noexcept { return path_; }

  // Reads exactly n bytes at offset; the caller has checked the range.
  inline Result<void> read_at(std::uint64_t offset, char* dst, std::size_t n) const {
    while (n > 0) {
      const ssize_t got = ::pread(fd_, dst, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got == 0) return fail(ErrorKind::io_error, ended_early(offset));
      if (got < 0) return fail(ErrorKind::io_error, text::cat("read error in ", path_, " at offset ", offset));
      dst += got;
      n -= static_cast<std::size_t>(got);
      offset += static_cast<std::uint64_t>(got);
    }
    return {};
  }

  // Reads up to n bytes at offset, fewer where the bytes end before size()
  // (a file cut short, or its beginning alone handed over with the whole
  // file's size); an error when none are there.
  inline Result<std::size_t> read_some(std::uint64_t offset, char* dst, std::size_t n) const {
    std::size_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd_, dst + done, n - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return fail(ErrorKind::io_error, text::cat("read error in ", path_, " at offset ", offset + done));
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    if (done == 0 && n > 0) return fail(ErrorKind::io_error, ended_early(offset));
    return done;
  }

 private:
  inline BinaryFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  inline std::string ended_early(std::uint64_t offset) const {
    return text::cat(path_, ": its bytes end at offset ", offset, " though its size is ", size_,
                     " (a file cut short, or a beginning too short to hold the header)");
  }
  int fd_ = -1;
  std::string path_;
  std::uint64_t size_ = 0;
};

// Layer index of "blk.12.attn_q.weight"; nullopt for other names.
inline std::optional<std::uint32_t> layer_of(std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  name.remove_prefix(prefix.size());
  const auto dot = name.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto n = text::parse_u64(name.substr(0, dot));
  if (!n || *n > 1'000'000) return std::nullopt;
  return static_cast<std::uint32_t>(*n);
}

inline void add_dtype(std::vector<DtypeCount>& counts, std::string_view dtype, std::uint64_t parameters, std::uint64_t bytes) {
  for (auto& c : counts)
    if (c.dtype == dtype) {
      ++c.tensors;
      c.parameters += parameters;
      c.bytes += bytes;
      return;
    }
  counts.push_back({std::string(dtype), 1, parameters, bytes});
}

inline void sort_dtypes(std::vector<DtypeCount>& counts) {
  std::sort(counts.begin(), counts.end(), [](const DtypeCount& a, const DtypeCount& b) { return a.dtype < b.dtype; });
}

}  // namespace hwaccel::model_files
