import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which file a path names: its device and inode.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64

    /// The identity of the file at `path` now; nil when there is none (or it cannot be read).
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

extension ChatDatabase {
    /// What every write transaction checks first: the store can write, and its file is still
    /// the one at `path`.
    func checkCanWrite() throws(ChatStoreError) {
        if !reopenForWritingIfSpaceFreed() {
            throw .storageFull(
                path: path,
                detail: "the disk was full when the database was opened, so it was opened for reading only; writes resume once space is freed")
        }
        try checkFileIdentity()
    }

    /// Checks that `path` still names the file this store opened: a database file deleted or
    /// replaced while open keeps taking commits into the old file, which nobody finds at the
    /// path again (issue 22). One `stat` call; every write transaction checks it first.
    ///
    /// - Throws: `ChatStoreError.fileGone` when the file was deleted, moved or replaced.
    public func checkFileIdentity() throws(ChatStoreError) {
        guard let opened = fileIdentity else { return }
        guard let current = FileIdentity(path: path) else {
            throw .fileGone(path: path, reason: "it was deleted or moved away")
        }
        if current != opened {
            throw .fileGone(path: path, reason: "another file was put in its place")
        }
    }
}
