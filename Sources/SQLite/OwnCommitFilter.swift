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
/// writer commits, or while the header is still the one its last commit left (or the one it
/// last looked for other writers' commits at: `commitsSeen(upTo:)`), is its own.
/// A foreign commit that slips in just before `commitDidEnd()` is missed here, so the writer
/// must look for other writers (`PRAGMA data_version`) after each commit.
///
/// Without a readable `-shm` file (another VFS, exclusive locking) every change is foreign.
///
/// A watcher can also stop looking while the process writes (`onOwnWrites`): the writer's
/// commits and the checkpointer's checkpoints (`checkpointWillBegin()`, `checkpointDidEnd()`)
/// are then not seen at all, and the watcher hears when the last of them ends whether another
/// process may have committed meanwhile (a checkpoint does not hold the write lock).
public final class OwnCommitFilter: Sendable {
    private struct State {
        var committing = false
        var headerAfterOwnCommit: [UInt8]?
        var descriptor: Int32 = -1
        /// Commits and checkpoints of this process under way.
        var ownWrites = 0
        /// A checkpoint was among the writes under way.
        var checkpointed = false
        var onOwnWrites: (@Sendable (OwnWrites) -> Void)?
    }

    /// What `onOwnWrites` hears.
    public enum OwnWrites: Sendable {
        /// The process begins writing the database's files: stop looking.
        case began
        /// The process's writes have ended; `foreignCommitPossible` when the wal-index header
        /// is not the one the last own commit left (another process committed meanwhile, or
        /// before with no own commit since). `afterCheckpoint` when a checkpoint was among them:
        /// it holds no write lock, so another process may have written a commit's frames
        /// meanwhile, unwatched, and publish its header only later.
        case ended(foreignCommitPossible: Bool, afterCheckpoint: Bool)
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
        state.withLock { state in
            state.committing = true
            Self.ownWritesBegin(&state)
        }
    }

    /// The writer's commit has ended (committed or not).
    public func commitDidEnd() {
        state.withLock { state in
            state.headerAfterOwnCommit = Self.header(&state, path: indexPath)
            state.committing = false
            // The header was just read: it is the own commit's, unless it could not be read.
            Self.ownWritesEnd(&state) { $0.headerAfterOwnCommit == nil }
        }
    }

    /// The wal-index header as it is now, nil when it cannot be read: read it before looking for
    /// other processes' commits (`PRAGMA data_version`), then pass it to `commitsSeen(upTo:)`.
    public func currentHeader() -> [UInt8]? {
        state.withLock { Self.header(&$0, path: indexPath) }
    }

    /// The writer has seen every commit up to `header` (read before it looked for other
    /// processes' commits): a change that leaves the header as it is, such as this process
    /// opening or closing the files before its first commit (the start-up's quick check) or its
    /// checkpoints after another process's commit, is not foreign, as after an own commit.
    public func commitsSeen(upTo header: [UInt8]?) {
        state.withLock { $0.headerAfterOwnCommit = header }
    }

    /// A checkpoint of this process's is about to write the database file.
    public func checkpointWillBegin() {
        state.withLock { state in
            state.checkpointed = true
            Self.ownWritesBegin(&state)
        }
    }

    /// The checkpoint has ended.
    public func checkpointDidEnd() {
        state.withLock { state in
            Self.ownWritesEnd(&state) { [indexPath] state in
                let own = state.headerAfterOwnCommit
                return own == nil || Self.header(&state, path: indexPath) != own
            }
        }
    }

    /// Calls `handler` (under this filter's lock, so it must not call back into the filter)
    /// when the process begins writing and when its last write ends; nil stops the calls. Set
    /// while writes are under way, `handler` hears first of their end.
    public func onOwnWrites(_ handler: (@Sendable (OwnWrites) -> Void)?) {
        state.withLock { $0.onOwnWrites = handler }
    }

    private static func ownWritesBegin(_ state: inout State) {
        state.ownWrites += 1
        if state.ownWrites == 1 { state.onOwnWrites?(.began) }
    }

    /// `foreignCommitPossible` is asked only when the last own write ends and a handler listens.
    private static func ownWritesEnd(_ state: inout State, foreignCommitPossible: (inout State) -> Bool) {
        state.ownWrites -= 1
        guard state.ownWrites == 0 else { return }
        let checkpointed = state.checkpointed
        state.checkpointed = false
        guard let handler = state.onOwnWrites else { return }
        handler(.ended(foreignCommitPossible: foreignCommitPossible(&state), afterCheckpoint: checkpointed))
    }

    /// The wal-index header when a change just seen may be another process's commit (`.some(nil)`
    /// when it cannot be read), nil when the change is the process's own. One `pread` of 48 bytes.
    public func foreignChange() -> [UInt8]?? {
        state.withLock { state -> [UInt8]?? in
            if state.committing { return nil }
            let header = Self.header(&state, path: indexPath)
            if let own = state.headerAfterOwnCommit, header == own { return nil }
            return .some(header)
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
