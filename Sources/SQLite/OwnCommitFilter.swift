import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Tells a writer's own commits from other processes' ones, for a watcher of the database's
/// files: both write the `-wal` file, but only another process's commit should wake the writer.
///
/// The writer brackets each of its commits with `commitWillBegin()` and `commitDidEnd()`; the
/// latter notes the header of the wal-index (the `-shm` file's first 48 bytes, which every
/// commit changes: its change counter, last frame and checksums). A change seen while the
/// writer commits, or while the header is still the one its last commit left, is its own.
/// A foreign commit that slips in just before `commitDidEnd()` is missed here, so the writer
/// must look for other writers (`PRAGMA data_version`) after each commit.
///
/// Without a readable `-shm` file (another VFS, exclusive locking) every change is foreign.
public final class OwnCommitFilter: Sendable {
    private struct State {
        var committing = false
        var headerAfterOwnCommit: [UInt8]?
        var descriptor: Int32 = -1
    }

    private let state = Mutex(State())
    private let indexPath: String

    /// A filter for the database at `databasePath` (its wal-index is `databasePath-shm`).
    public init(databasePath: String) {
        indexPath = databasePath + "-shm"
    }

    deinit {
        state.withLock { if $0.descriptor >= 0 { close($0.descriptor) } }
    }

    /// The writer is about to commit.
    public func commitWillBegin() {
        state.withLock { $0.committing = true }
    }

    /// The writer's commit has ended (committed or not).
    public func commitDidEnd() {
        state.withLock { state in
            state.headerAfterOwnCommit = Self.header(&state, path: indexPath)
            state.committing = false
        }
    }

    /// Whether a change to the database's files just seen may be another process's commit.
    /// One `pread` of 48 bytes.
    public func isForeignChange() -> Bool {
        state.withLock { state in
            if state.committing { return false }
            if let own = state.headerAfterOwnCommit, Self.header(&state, path: indexPath) == own { return false }
            return true
        }
    }

    /// The wal-index header, or nil when it cannot be read.
    private static func header(_ state: inout State, path: String) -> [UInt8]? {
        if state.descriptor < 0 {
            state.descriptor = open(path, O_RDONLY | O_CLOEXEC)
            if state.descriptor < 0 { return nil }
        }
        var bytes = [UInt8](repeating: 0, count: 48)
        let count = bytes.withUnsafeMutableBytes { pread(state.descriptor, $0.baseAddress, 48, 0) }
        return count == 48 ? bytes : nil
    }
}
