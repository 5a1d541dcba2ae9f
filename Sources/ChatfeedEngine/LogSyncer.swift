import SQLite

/// Syncs the engine's group commits on a thread of its own, so that the engine thread reads
/// acks and requests while the disk makes a group durable (docs/DECISIONS.md, "A group's sync
/// runs beside the engine"). One sync at a time: the engine starts one after a commit, and
/// answers the group once it has ended (`poll()` each round, or `wait()`); or, when nothing it
/// could read meanwhile would let anything out, syncs the group itself (`syncHere`).
final class LogSyncer: @unchecked Sendable {
    private let thread: WorkerThread
    /// The outcome of the sync started last, written by its job (read once `poll` or `wait`
    /// found it ended).
    private var outcome: Result<Void, SQLiteError>?
    /// Called on the sync thread before each sync (`EngineOptions.logSyncWillBegin`).
    private let willBegin: (@Sendable () throws -> Void)?

    /// `whenDone` is called on the sync thread when a sync ends (the engine's queue wakes).
    init(whenDone: @escaping @Sendable () -> Void, willBegin: (@Sendable () throws -> Void)?) {
        self.willBegin = willBegin
        thread = WorkerThread(named: "chatfeed.fsync", whenDone: whenDone)
    }

    /// Starts syncing `log` (no sync may be running: `poll()` or `wait()` took the last one's).
    func start(_ log: WriteAheadLogFile) {
        thread.start { [self] in outcome = syncHere(log) }
    }

    /// The outcome of the running sync once it has ended (it is then no longer running); nil
    /// while it runs.
    func poll() -> Result<Void, SQLiteError>? {
        thread.poll() ? takeOutcome() : nil
    }

    /// Waits for the running sync (one must have been started) to end and returns its outcome.
    func wait() -> Result<Void, SQLiteError> {
        thread.wait()
        return takeOutcome()
    }

    private func takeOutcome() -> Result<Void, SQLiteError> {
        defer { outcome = nil }
        return outcome!
    }

    /// Syncs `log` on the calling thread, as the syncer's thread does (no sync of the syncer's
    /// may be running): for the engine, when nothing it could read during the sync would let
    /// anything out, so that the two threads' hand-offs are spared.
    func syncHere(_ log: WriteAheadLogFile) -> Result<Void, SQLiteError> {
        do {
            try willBegin?()
            try log.sync()
            return .success(())
        } catch let error as SQLiteError {
            return .failure(error)
        } catch {
            return .failure(SQLiteError(extendedResultCode: .ioError, message: "\(error)"))
        }
    }

    /// Ends the thread once its running sync has ended.
    func stop() {
        thread.stop()
    }
}
