"""The one file-system layer: every read and write of slimdata's converters and tools.

Shards, `dataset_info.json`, `labels.txt`, index files, temporaries, renames and the source
files converters read all go through this module, so that a folder with a URL scheme
(`gs://bucket/...`, `s3://...`, TensorFlow's in-memory `ram://...`) works for all of them
alike: local paths use the standard library, URLs `tf.io.gfile` (TensorFlow is imported when
the first URL is seen, never for local paths).

What it guarantees:

- **Errors name the file.** Every `OSError` leaves this module as a `FileError` (an
  `OSError` with the same errno) whose message is `<path>: cannot <action>: <reason>`, e.g.
  `out/train-00001-of-00004.tfrecord: cannot write: [Errno 28] No space left on device`.
- **Atomic files.** `atomic_write(path)` writes `.<name>.tmp-<pid>` in the same folder,
  flushes and fsyncs it, and renames it over `path`; on any error the temporary is removed,
  so no half-written file ever stands under a final name.
- **Hostile sources refused.** `read_source(path, ...)` opens without blocking and refuses
  anything that is not a regular file (a FIFO would hang a plain `open`), a file larger than
  a bound, and (given `root`) a file that resolves, through symlinks, outside the dataset
  root.
- **One writer per folder.** `lock_folder(path)` holds an exclusive `flock` on a local
  folder while a conversion writes into it; a second conversion into the same folder is
  refused instead of interleaving with the first. The lock goes with the process, however
  it ends. (URL folders cannot be locked: run one conversion per folder there.)
"""

import contextlib
import errno
import fcntl
import functools
import glob as glob_module
import io
import os
import shutil
import stat as stat_module
import sys
from typing import (
    Any,
    BinaryIO,
    Callable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
)

#: The default bound on one source file (an image, an annotation, an idx file inflated).
DEFAULT_MAX_SOURCE_BYTES = 1 << 30

TEMPORARY_MARK = '.tmp-'


class FileError(OSError):
    """An I/O problem with one file: `<path>: cannot <action>: <reason>`.

    Attributes:
      path: the file (or folder).
      action: what was being done ('read', 'write', 'rename to <path>', ...).
      reason: the underlying problem.
    """

    def __init__(self, path: str, action: str, reason: str, code: Optional[int] = None):
        self.path = path
        self.action = action
        self.reason = reason
        super().__init__(code, str(self))

    def __str__(self) -> str:
        return f'{self.path}: cannot {self.action}: {self.reason}'

    def __reduce__(self):  # keeps the fields when the error crosses a process boundary
        return type(self), (self.path, self.action, self.reason, self.errno)


class SourceError(ValueError):
    """A source file a converter must not read (not a regular file, too large, outside the
    dataset root); the message names it and says what was expected."""


class FileStat(NamedTuple):
    """What `stat` says of a file (inode and device are 0 behind a URL)."""
    size: int
    mtime_ns: int
    inode: int = 0
    device: int = 0


def is_url(path: str) -> bool:
    """True for `scheme://...` paths, which go through `tf.io.gfile`."""
    return '://' in os.fspath(path)


def _gfile() -> Any:
    from slimdata._tf import tf  # only URL paths need TensorFlow
    return tf.io.gfile


def _io_errors() -> Tuple[type, ...]:
    """The exception types that mean an I/O problem: OSError, and tf.io.gfile's errors."""
    tf = sys.modules.get('tensorflow')  # only URL paths, which import it, raise its errors
    return (OSError, tf.errors.OpError) if tf is not None else (OSError,)


def _file_error(path: str, action: str, error: BaseException) -> 'FileError':
    if isinstance(error, OSError) and error.errno is not None and error.strerror:
        return FileError(path, action, f'[Errno {error.errno}] {error.strerror}', error.errno)
    return FileError(path, action, f'{type(error).__name__}: {error}',
                     getattr(error, 'errno', None))


@contextlib.contextmanager
def _naming(path: str, action: str) -> Iterator[None]:
    """Turns an I/O error raised inside into a FileError naming `path`."""
    try:
        yield
    except (FileError, FileNotFoundError):
        raise  # a FileNotFoundError names its file already
    except Exception as error:
        if not isinstance(error, _io_errors()):
            raise
        raise _file_error(path, action, error) from error


# ----------------------------------------------------------------------------------------------
# Queries

def exists(path: str) -> bool:
    with _naming(path, 'check'):
        return _gfile().exists(path) if is_url(path) else os.path.exists(path)


def isdir(path: str) -> bool:
    with _naming(path, 'check'):
        return _gfile().isdir(path) if is_url(path) else os.path.isdir(path)


def listdir(path: str) -> List[str]:
    """The names in the folder `path`, sorted (the order never depends on the file system)."""
    with _naming(path, 'list'):
        if is_url(path):
            return sorted(name.rstrip('/') for name in _gfile().listdir(path))
        return sorted(os.listdir(path))


def list_files(path: str) -> List[str]:
    """The names of the regular files (after symlinks) in the folder `path`, sorted."""
    with _naming(path, 'list'):
        if is_url(path):
            return [name for name in listdir(path) if not isdir(os.path.join(path, name))]
        return sorted(entry.name for entry in os.scandir(path) if entry.is_file())


def glob(pattern: str) -> List[str]:
    """The paths matching a glob pattern, sorted."""
    with _naming(pattern, 'list the matches of'):
        if is_url(pattern):
            return sorted(_gfile().glob(pattern))
        return sorted(glob_module.glob(pattern))


def stat(path: str) -> FileStat:
    """Size and modification time (ns) of a file, following symlinks."""
    with _naming(path, 'stat'):
        if is_url(path):
            result = _gfile().stat(path)
            return FileStat(result.length, result.mtime_nsec)
        result = os.stat(path)
        return FileStat(result.st_size, result.st_mtime_ns, result.st_ino, result.st_dev)


def size(path: str) -> int:
    return stat(path).size


# ----------------------------------------------------------------------------------------------
# Changes

def makedirs(path: str) -> None:
    with _naming(path, 'create the folder'):
        if is_url(path):
            _gfile().makedirs(path)
        else:
            os.makedirs(path, exist_ok=True)


def remove(path: str) -> None:
    """Removes a file; a missing one is fine."""
    with _naming(path, 'remove'):
        if is_url(path):
            if _gfile().exists(path):
                _gfile().remove(path)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)


def remove_folder(path: str) -> None:
    """Removes an empty folder (a URL's folder with what is left in it); a missing one is
    fine."""
    _remove_directory(path, os.rmdir)


def remove_tree(path: str) -> None:
    """Removes a folder and everything in it (a folder written under a temporary name, an
    old export); a missing one is fine."""
    _remove_directory(path, shutil.rmtree)


def _remove_directory(path: str, remove_local: Callable[[str], None]) -> None:
    """A URL's folder goes with what is in it (object stores have no empty folders); a local
    one by `remove_local`."""
    with _naming(path, 'remove the folder'):
        if is_url(path):
            if _gfile().exists(path):
                _gfile().rmtree(path)
        else:
            with contextlib.suppress(FileNotFoundError):
                remove_local(path)


def rename(source: str, target: str) -> None:
    """Renames `source` to `target`, replacing it (atomically, for local paths)."""
    with _naming(source, f'rename to {target}'):
        if is_url(source):
            _gfile().rename(source, target, overwrite=True)
        else:
            os.replace(source, target)


def sync_folder(path: str) -> None:
    """Makes the renames in a local folder durable (fsync of the folder); no-op for URLs."""
    if is_url(path):
        return
    with _naming(path, 'sync the folder'):
        descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


# ----------------------------------------------------------------------------------------------
# Writing

def temporary_path(path: str, pid: Optional[int] = None) -> str:
    """`.<name>.tmp-<pid>` beside `path`: the name a file is written under until complete."""
    folder, name = os.path.split(path)
    return os.path.join(folder, f'.{name}{TEMPORARY_MARK}{os.getpid() if pid is None else pid}')


class _NamedWriter(io.RawIOBase):
    """A binary file open for writing whose errors name the file and which can be synced."""

    def __init__(self, path: str, file: BinaryIO, local: bool):
        super().__init__()
        self.path = path
        self._file = file
        self._local = local
        self._file_closed = False  # gfile's GFile has no `closed` to ask

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        # try/except rather than `_naming`: this is called per record piece, and a context
        # manager costs a microsecond or more per call.
        try:
            written = self._file.write(data)
        except Exception as error:
            if not isinstance(error, _io_errors()):
                raise
            raise _file_error(self.path, 'write', error) from error
        return len(data) if written is None else written

    def flush(self) -> None:
        if not self.closed and not self._file_closed:
            with _naming(self.path, 'write'):
                self._file.flush()

    def sync(self) -> None:
        """Flushes and, for a local file, fsyncs it: its bytes are on disk after this."""
        self.flush()
        if self._local:
            with _naming(self.path, 'write'):
                os.fsync(self._file.fileno())

    def close(self) -> None:
        if not self.closed:
            try:
                with _naming(self.path, 'write'):
                    self._file.close()
            finally:
                self._file_closed = True
                super().close()


def open_write(path: str, buffer_size: int = io.DEFAULT_BUFFER_SIZE) -> _NamedWriter:
    """Opens `path` for writing bytes (truncating it). Use `atomic_write` for final names."""
    with _naming(path, 'open for writing'):
        if is_url(path):
            return _NamedWriter(path, _gfile().GFile(path, 'wb'), local=False)
        return _NamedWriter(path, open(path, 'wb', buffering=buffer_size), local=True)


@contextlib.contextmanager
def atomic_write(path: str, buffer_size: int = io.DEFAULT_BUFFER_SIZE) -> Iterator[_NamedWriter]:
    """Writes `path` through a synced temporary renamed over it when the block succeeds.

    On any exception (an I/O error, Ctrl-C) the temporary is removed and `path` is left as
    it was; an I/O error on the temporary is reported as one on `path`.
    """
    temporary = temporary_path(path)
    try:
        file = open_write(temporary, buffer_size)
    except FileError as error:
        raise FileError(path, error.action, error.reason, error.errno) from error
    try:
        yield file
        file.sync()
        file.close()
        rename(temporary, path)
    except BaseException as error:
        _close_quietly(file)
        remove(temporary)
        if isinstance(error, FileError) and error.path == temporary:
            raise FileError(path, error.action, error.reason, error.errno) from error
        raise


def _close_quietly(file: io.RawIOBase) -> None:
    with contextlib.suppress(OSError):
        file.close()


def write_bytes_atomic(path: str, data: bytes) -> None:
    with atomic_write(path) as file:
        file.write(data)


def write_text_atomic(path: str, text: str) -> None:
    write_bytes_atomic(path, text.encode('utf-8'))


# ----------------------------------------------------------------------------------------------
# Reading

class Reader(io.RawIOBase):
    """An unbuffered binary reader (`readinto`, `read`, `seek`) whose errors name its file.

    Attributes:
      path: the file.
      size: its size when it was opened, where known (`open_source`), else -1.
    """

    def __init__(self, path: str, file: Any):  # a local io.FileIO or a tf.io.gfile.GFile
        super().__init__()
        self.path = path
        self.size = -1
        self._file = file

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._file.tell()

    def close(self) -> None:
        if not self.closed:
            self._file.close()
            super().close()


class _GFileReader(Reader):
    """`tf.io.gfile.GFile` as a raw reader with `readinto` (what the record scanner pulls)."""

    def __init__(self, path: str):
        super().__init__(path, _gfile().GFile(path, 'rb'))

    def readinto(self, view: Any) -> int:
        with _naming(self.path, 'read'):
            data = self._file.read(len(view))
        view[:len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        with _naming(self.path, 'seek in'):
            self._file.seek(offset, whence)
            return self._file.tell()


class _NamedReader(Reader):
    """A local file (an unbuffered `io.FileIO`) as a `Reader`."""

    def readinto(self, view: Any) -> int:
        try:
            return self._file.readinto(view)
        except OSError as error:
            raise _file_error(self.path, 'read', error) from error

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self._file.seek(offset, whence)


def open_read(path: str) -> Reader:
    """Opens a file for reading bytes, unbuffered (`readinto`, `read`); errors name it.

    Raises:
      FileNotFoundError: naming `path`, when there is no such file.
      FileError: for any other I/O problem.
    """
    if is_url(path):
        if not exists(path):
            raise FileNotFoundError(errno.ENOENT, 'No such file', path)
        with _naming(path, 'open'):
            return _GFileReader(path)
    try:
        return _NamedReader(path, open(path, 'rb', buffering=0))
    except FileNotFoundError:
        raise
    except OSError as error:
        raise _file_error(path, 'open', error) from error


def read_bytes(path: str) -> bytes:
    """The whole content of a file we wrote or were given as data (not a source file)."""
    with open_read(path) as file:
        return file.read()


Roots = Union[str, Sequence[str]]


def read_source(path: str, root: Optional[Roots] = None,
                max_bytes: int = DEFAULT_MAX_SOURCE_BYTES, head: Optional[int] = None) -> bytes:
    """Reads a converter's source file, refusing what must not be read (see `open_source`).

    Args:
      path, root, max_bytes: see `open_source`.
      head: read only the first `head` bytes (to tell a file's format).
    """
    if is_url(path) or head is not None:
        with open_source(path, root, max_bytes) as file:
            return file.read(head) if head is not None else _read_to_end(file.read, path,
                                                                       file.size, max_bytes)
    # Converters read two files per example: the descriptor itself, without a file object
    # and a context manager around it, costs 20 us less per file (a quarter of the read).
    descriptor, file_size = _open_checked(path, root, max_bytes)
    try:
        with _naming(path, 'read'):
            return _read_to_end(functools.partial(os.read, descriptor), path, file_size,
                                max_bytes)
    finally:
        os.close(descriptor)


def _read_to_end(read: Callable[[int], bytes], path: str, size: int, max_bytes: int) -> bytes:
    """Reads to the end of the file: the `size` fstat gave, in one read where the kernel
    allows (a read returns at most 2 GiB), and whatever it grew by since, up to `max_bytes`."""
    pieces, total = [], 0
    while True:
        wanted = size + 1 - total if total <= size else 1 << 20
        piece = read(wanted)
        pieces.append(piece)
        total += len(piece)
        _check_size(path, total, max_bytes)
        if not piece or (len(piece) < wanted and total >= size):
            break  # a short read at or past the size is the end of the file
    return pieces[0] if len(pieces) == 1 else b''.join(pieces)


@contextlib.contextmanager
def open_source(path: str, root: Optional[Roots] = None,
                max_bytes: int = DEFAULT_MAX_SOURCE_BYTES) -> Iterator[Reader]:
    """Opens a converter's source file for reading, refusing what must not be read.

    Args:
      path: the file.
      root: the dataset root (or several folders); if given, the file must resolve (through
        any symlinks) to a path inside it. None allows any target (the converters'
        `--follow-symlinks`).
      max_bytes: files larger than this are refused.

    Raises:
      FileNotFoundError: naming `path`, when there is no such file.
      SourceError: naming `path`, for a symlink leaving `root`, anything that is not a
        regular file (a folder, a FIFO, a device, a socket), or a file over `max_bytes`.
      FileError: for an I/O error.
    """
    if is_url(path):
        if not exists(path):
            raise FileNotFoundError(errno.ENOENT, 'No such file', path)
        if isdir(path):
            raise SourceError(f'{path} is a folder, not a regular file')
        file_size = size(path)
        _check_size(path, file_size, max_bytes)
        with open_read(path) as file:
            file.size = file_size  # as for a local file: `read_source` reads this much at once
            yield file
        return
    descriptor, file_size = _open_checked(path, root, max_bytes)
    try:
        file = _NamedReader(path, open(descriptor, 'rb', buffering=0, closefd=True))
    except BaseException:
        os.close(descriptor)
        raise
    file.size = file_size
    with file:
        yield file


def _open_checked(path: str, root: Optional[Roots], max_bytes: int) -> Tuple[int, int]:
    """Opens a local source file and checks it (see `open_source`): its descriptor and size.

    Raises:
      FileNotFoundError, SourceError, FileError: as `open_source`.
    """
    if root is not None and not _HAS_PROC_FD_LINKS:
        check_inside_root(path, root)
    try:
        # O_NONBLOCK: opening a FIFO without a writer must not wait for one; O_NOCTTY: a
        # terminal device must not become ours. The file is checked once open (below).
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise _file_error(path, 'open', error) from error
    try:
        info = os.fstat(descriptor)
        _check_regular(path, info.st_mode)
        if root is not None:
            # Where the file opened really is: no symlink can be swapped in after this check.
            check_inside_root(_opened_path(descriptor, path), root, shown=path,
                              resolved=_HAS_PROC_FD_LINKS)
        _check_size(path, info.st_size, max_bytes)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor, info.st_size


_FILE_KINDS = ((stat_module.S_ISDIR, 'a folder'), (stat_module.S_ISFIFO, 'a FIFO (named pipe)'),
               (stat_module.S_ISSOCK, 'a socket'), (stat_module.S_ISCHR, 'a character device'),
               (stat_module.S_ISBLK, 'a block device'))


def _check_regular(path: str, mode: int) -> None:
    if not stat_module.S_ISREG(mode):
        kind = next((name for test, name in _FILE_KINDS if test(mode)), 'a special file')
        raise SourceError(f'{path} is {kind}, not a regular file')


def _check_size(path: str, num_bytes: int, max_bytes: int) -> None:
    if num_bytes > max_bytes:
        raise SourceError(f'{path} has {num_bytes:,} bytes or more, over the limit of '
                          f'{max_bytes:,} bytes for one source file (--max-file-size raises '
                          'it)')


def check_regular_file(path: str) -> None:
    """Raises SourceError (naming `path`) unless it is a regular file (after symlinks)."""
    if is_url(path):
        if isdir(path):
            raise SourceError(f'{path} is a folder, not a regular file')
        return
    with _naming(path, 'stat'):
        mode = os.stat(path).st_mode
    _check_regular(path, mode)


# Linux names the file behind an open descriptor in /proc/self/fd: one readlink, where
# os.path.realpath walks every component of the path with a syscall each (ten times slower,
# and checked before the open rather than of the file opened).
_HAS_PROC_FD_LINKS = os.path.isdir('/proc/self/fd')


def _opened_path(descriptor: int, path: str) -> str:
    """The real path of an open file (Linux's /proc), or `path` resolved where there is none."""
    if _HAS_PROC_FD_LINKS:
        return os.readlink(f'/proc/self/fd/{descriptor}')
    return os.path.realpath(path)


@functools.lru_cache(maxsize=64)
def _real_folder(folder: str) -> str:
    """A root resolved once per process (converters check every file against it)."""
    return os.path.realpath(folder)


def check_inside_root(path: str, root: Roots, shown: Optional[str] = None,
                      resolved: bool = False) -> None:
    """Raises SourceError unless `path` resolves (through symlinks) inside `root`.

    Args:
      path: the path to check.
      root: the dataset root, or several folders (each resolved too, so a root reached
        through a symlink is fine).
      shown: the path to name in the error, if not `path`.
      resolved: `path` is already a real path (from /proc).
    """
    roots = [root] if isinstance(root, str) else list(root)
    real_path = path if resolved else os.path.realpath(path)
    for folder in roots:
        real_root = _real_folder(folder)
        if real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep):
            return
    raise SourceError(f'{shown or path} resolves to {real_path}, outside the dataset root '
                      f'{" or ".join(roots)}; converters read only files inside it '
                      '(--follow-symlinks allows links that leave it)')


# ----------------------------------------------------------------------------------------------
# Locking

class FolderBusyError(RuntimeError):
    """Another process (another conversion) is writing into the same folder."""


@contextlib.contextmanager
def lock_folder(path: str) -> Iterator[None]:
    """Holds an exclusive lock on the local folder `path` for the block (no-op for URLs).

    Raises:
      FolderBusyError: at once, when another process holds it.
    """
    if is_url(path):
        yield
        return
    with _naming(path, 'lock'):
        descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as error:
            raise FolderBusyError(
                f'{path} is being written by another slimdata conversion; wait for it to end '
                'or write into another folder') from error
        yield
    finally:
        os.close(descriptor)  # releases the lock
