// The WASI preview1 calls hwaccel.wasm makes, answered in memory, so that the
// same module runs in Node and in a browser with no file system and no
// dependency. The module reads a model's files the POSIX way; here those are
// the bytes the caller handed over (files: path -> { data: Uint8Array, size }),
// read-only. `size` is the whole file's: a model file may be handed over as its
// header alone, and reads past `data` find its end.
// Everything else the module could ask for (the environment, other files)
// is absent, and its error output is kept for the caller's messages.

const ESUCCESS = 0;
const EBADF = 8;
const EINVAL = 28;
const EISDIR = 31;
const ENOENT = 44;
const ENOTDIR = 54;
const ENOTSUP = 58;
const EROFS = 69;

const FILETYPE_CHARACTER_DEVICE = 2;
const FILETYPE_DIRECTORY = 3;
const FILETYPE_REGULAR_FILE = 4;

const PREOPEN_FD = 3;
const OFLAGS_CREAT = 1;
const OFLAGS_TRUNC = 8;
const RIGHTS_FD_WRITE = 1n << 6n;

// Thrown by proc_exit: the module asked to end (abort, a failed check).
export class WasiExit extends Error {
  constructor(code) {
    super(`the WebAssembly module exited with status ${code}`);
    this.code = code;
  }
}

export class MemoryWasi {
  constructor() {
    this.memory = null;
    this.files = new Map();  // absolute path -> { data, size }
    this.open = new Map();   // fd -> { path, file, position } | { dir }
    this.nextFd = PREOPEN_FD + 1;
    this.stderr = '';
    this.decoder = new TextDecoder();
  }

  // Files the next call may read; replaces those of the last call.
  setFiles(files) {
    this.files = new Map(files);
    this.open.clear();
    this.nextFd = PREOPEN_FD + 1;
  }

  takeStderr() {
    const text = this.stderr;
    this.stderr = '';
    return text;
  }

  view() { return new DataView(this.memory.buffer); }
  bytes() { return new Uint8Array(this.memory.buffer); }

  pathAt(ptr, len) {
    return this.decoder.decode(this.bytes().subarray(ptr, ptr + len));
  }

  // An absolute, normal path below the preopened "/".
  resolve(relative) {
    const parts = [];
    for (const part of relative.split('/')) {
      if (part === '' || part === '.') continue;
      if (part === '..') parts.pop();
      else parts.push(part);
    }
    return '/' + parts.join('/');
  }

  isDirectory(path) {
    if (path === '/') return true;
    const prefix = path + '/';
    for (const name of this.files.keys()) if (name.startsWith(prefix)) return true;
    return false;
  }

  writeFilestat(ptr, type, size) {
    const v = this.view();
    for (let i = 0; i < 64; i += 8) v.setBigUint64(ptr + i, 0n, true);
    v.setUint8(ptr + 16, type);
    v.setBigUint64(ptr + 24, 1n, true);            // nlink
    v.setBigUint64(ptr + 32, BigInt(size), true);  // size
  }

  imports() {
    const self = this;
    return {
      args_get: () => ESUCCESS,
      args_sizes_get(argc, bufSize) {
        self.view().setUint32(argc, 0, true);
        self.view().setUint32(bufSize, 0, true);
        return ESUCCESS;
      },
      environ_get: () => ESUCCESS,
      environ_sizes_get(count, bufSize) {
        self.view().setUint32(count, 0, true);
        self.view().setUint32(bufSize, 0, true);
        return ESUCCESS;
      },
      clock_time_get(_id, _precision, out) {
        const ns = BigInt(Math.round(performance.now() * 1e6)) + BigInt(Date.now()) * 1000000n;
        self.view().setBigUint64(out, ns, true);
        return ESUCCESS;
      },
      clock_res_get(_id, out) {
        self.view().setBigUint64(out, 1000n, true);
        return ESUCCESS;
      },
      random_get(ptr, len) {
        crypto.getRandomValues(self.bytes().subarray(ptr, ptr + len));
        return ESUCCESS;
      },
      proc_exit(code) { throw new WasiExit(code); },
      sched_yield: () => ESUCCESS,
      fd_write(fd, iovs, count, written) {
        if (fd !== 1 && fd !== 2) return EBADF;
        const v = self.view();
        let total = 0;
        for (let i = 0; i < count; i++) {
          const ptr = v.getUint32(iovs + i * 8, true);
          const len = v.getUint32(iovs + i * 8 + 4, true);
          // Kept bounded: a module that prints in a loop must not fill the page's memory.
          if (self.stderr.length < 65536) self.stderr += self.decoder.decode(self.bytes().subarray(ptr, ptr + len));
          total += len;
        }
        v.setUint32(written, total, true);
        return ESUCCESS;
      },
      fd_prestat_get(fd, out) {
        if (fd !== PREOPEN_FD) return EBADF;
        self.view().setUint8(out, 0);           // a directory
        self.view().setUint32(out + 4, 1, true); // its name's length: "/"
        return ESUCCESS;
      },
      fd_prestat_dir_name(fd, ptr, len) {
        if (fd !== PREOPEN_FD || len < 1) return EBADF;
        self.bytes()[ptr] = 0x2f;
        return ESUCCESS;
      },
      fd_fdstat_get(fd, out) {
        const v = self.view();
        for (let i = 0; i < 24; i += 8) v.setBigUint64(out + i, 0n, true);
        let type;
        if (fd <= 2) type = FILETYPE_CHARACTER_DEVICE;
        else if (fd === PREOPEN_FD || self.open.get(fd)?.dir) type = FILETYPE_DIRECTORY;
        else if (self.open.has(fd)) type = FILETYPE_REGULAR_FILE;
        else return EBADF;
        v.setUint8(out, type);
        v.setBigUint64(out + 8, ~0n, true);   // rights: all (the table is read-only anyway)
        v.setBigUint64(out + 16, ~0n, true);
        return ESUCCESS;
      },
      fd_filestat_get(fd, out) {
        if (fd === PREOPEN_FD) { self.writeFilestat(out, FILETYPE_DIRECTORY, 0); return ESUCCESS; }
        const f = self.open.get(fd);
        if (!f) return fd <= 2 ? (self.writeFilestat(out, FILETYPE_CHARACTER_DEVICE, 0), ESUCCESS) : EBADF;
        self.writeFilestat(out, f.dir ? FILETYPE_DIRECTORY : FILETYPE_REGULAR_FILE, f.dir ? 0 : f.file.size);
        return ESUCCESS;
      },
      path_filestat_get(fd, _flags, ptr, len, out) {
        if (fd !== PREOPEN_FD) return EBADF;
        const path = self.resolve(self.pathAt(ptr, len));
        const file = self.files.get(path);
        if (file) self.writeFilestat(out, FILETYPE_REGULAR_FILE, file.size);
        else if (self.isDirectory(path)) self.writeFilestat(out, FILETYPE_DIRECTORY, 0);
        else return ENOENT;
        return ESUCCESS;
      },
      path_open(fd, _dirflags, ptr, len, oflags, rightsBase, _inheriting, _fdflags, out) {
        if (fd !== PREOPEN_FD) return EBADF;
        if (oflags & (OFLAGS_CREAT | OFLAGS_TRUNC) || BigInt(rightsBase) & RIGHTS_FD_WRITE) return EROFS;
        const path = self.resolve(self.pathAt(ptr, len));
        const file = self.files.get(path);
        let entry;
        if (file) entry = { path, file, position: 0 };
        else if (self.isDirectory(path)) entry = { path, dir: true };
        else return ENOENT;
        if (oflags & 2 /* DIRECTORY */ && !entry.dir) return ENOTDIR;
        const opened = self.nextFd++;
        self.open.set(opened, entry);
        self.view().setUint32(out, opened, true);
        return ESUCCESS;
      },
      fd_close(fd) {
        if (!self.open.delete(fd)) return EBADF;
        return ESUCCESS;
      },
      fd_read(fd, iovs, count, read) {
        const f = self.open.get(fd);
        if (!f) return fd === 0 ? (self.view().setUint32(read, 0, true), ESUCCESS) : EBADF;
        if (f.dir) return EISDIR;
        const n = copyOut(self, f.file.data, f.position, iovs, count);
        f.position += n;
        self.view().setUint32(read, n, true);
        return ESUCCESS;
      },
      fd_pread(fd, iovs, count, offset, read) {
        const f = self.open.get(fd);
        if (!f) return EBADF;
        if (f.dir) return EISDIR;
        const n = copyOut(self, f.file.data, Number(offset), iovs, count);
        self.view().setUint32(read, n, true);
        return ESUCCESS;
      },
      fd_seek(fd, offset, whence, out) {
        const f = self.open.get(fd);
        if (!f || f.dir) return EBADF;
        const base = whence === 0 ? 0 : whence === 1 ? f.position : f.file.size;
        const position = base + Number(offset);
        if (position < 0) return EINVAL;
        f.position = position;
        self.view().setBigUint64(out, BigInt(position), true);
        return ESUCCESS;
      },
      // Folders of handed-over files are not listed: a model is one file.
      fd_readdir: () => ENOTSUP,
    };
  }
}

function copyOut(wasi, data, position, iovs, count) {
  const v = wasi.view();
  let done = 0;
  for (let i = 0; i < count && position + done < data.length; i++) {
    const ptr = v.getUint32(iovs + i * 8, true);
    const len = v.getUint32(iovs + i * 8 + 4, true);
    const chunk = data.subarray(position + done, Math.min(data.length, position + done + len));
    wasi.bytes().set(chunk, ptr);
    done += chunk.length;
  }
  return done;
}
