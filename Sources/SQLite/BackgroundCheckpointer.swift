import CSQLite
import Foundation
import NamedThreads

/// Copies the write-ahead log back into the database file on a thread of its own, with a
/// connection of its own, so that the writer's thread never waits for a checkpoint's `fsync`.
///
/// Pair it with a large `StoreOptions.autoCheckpointPages` on the writer's store (a backstop in
/// case the checkpointer falls behind). Call `commitHappened()` after commits: the checkpointer
/// runs a passive checkpoint (it never blocks readers or writers) `interval` after a commit, with
/// every commit made meanwhile, and sleeps while nothing is written. Call
/// `logSizeAfterCommit(_:)` instead where the log's size is known (`ChatDatabase.reportLogSize`):
/// once the log passes `earlyPages` the checkpointer copies it at once, again after each commit
/// until the writer's own checkpoint at the backstop starts the log over, so that the writer's
/// checkpoint finds little left to copy.
///
/// After each checkpoint that copied pages it syncs the database file: a checkpoint that a
/// writer overtakes (under a steady stream of commits, every one) does not, and would leave
/// what it copied for the writer's checkpoint to sync (docs/DECISIONS.md, "The checkpointer
/// syncs what it copied").
public final class BackgroundCheckpointer: @unchecked Sendable {
    private let condition = NSCondition()
    private var pendingCommits = false
    /// The log passed `earlyPages` since the last checkpoint: no waiting for the interval.
    private var logPastEarlyPages = false
    private let earlyPages: Int?
    private var stopped = false
    private var finished = false
    private let interval: TimeInterval
    private let ownWrites: OwnCommitFilter?

    /// Opens a second connection to `path` and starts the thread. `ownWrites` hears of each
    /// checkpoint, so that a watcher of the files does not take them for another process's.
    public init(
        path: String, busyTimeoutMilliseconds: Int, interval: TimeInterval = 1, earlyPages: Int? = nil,
        ownWrites: OwnCommitFilter? = nil
    ) throws {
        let db = try Database(path: path, mode: .init(readOnly: false, create: false))
        db.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
        self.interval = interval
        self.earlyPages = earlyPages
        self.ownWrites = ownWrites
        // The connection moves to the thread and is used there only.
        let owned = OwnedConnection(db: db)
        Thread.start(named: "chatfeed.ckpt") { [self] in run(owned.db) }
    }

    /// Notes that the writer committed; cheap, from any thread.
    public func commitHappened() {
        condition.lock()
        if !pendingCommits {
            pendingCommits = true
            condition.signal()
        }
        condition.unlock()
    }

    /// Notes that the writer committed and that its log holds `logFrames` frames now; cheap,
    /// from any thread (the writer's commit calls it).
    public func logSizeAfterCommit(_ logFrames: Int) {
        condition.lock()
        let early = earlyPages.map { logFrames >= $0 } ?? false
        if !pendingCommits || (early && !logPastEarlyPages) {
            pendingCommits = true
            logPastEarlyPages = logPastEarlyPages || early
            condition.signal()
        }
        condition.unlock()
    }

    /// Ends the thread after its current checkpoint, and returns once it has ended.
    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func run(_ db: Database) {
        condition.lock()
        while true {
            while !pendingCommits && !stopped { condition.wait() }
            // Commits during the interval add their pages to the same checkpoint: a page that
            // several commits changed is copied once. A stop cuts the wait short (the owner
            // checkpoints on its own when it closes).
            let due = Date(timeIntervalSinceNow: interval)
            while !stopped && !logPastEarlyPages && condition.wait(until: due) {}
            if stopped {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            pendingCommits = false
            logPastEarlyPages = false
            condition.unlock()
            // A failed checkpoint (e.g. busy) is retried after the next commit.
            ownWrites?.checkpointWillBegin()
            if let progress = try? db.checkpoint(.passive), progress.checkpointedFrames > 0 {
                try? db.syncMainFile()
            }
            ownWrites?.checkpointDidEnd()
            condition.lock()
        }
    }
}

/// A connection handed over to another thread, which becomes its only user.
private final class OwnedConnection: @unchecked Sendable {
    let db: Database
    init(db: Database) { self.db = db }
}
