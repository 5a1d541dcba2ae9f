import Foundation
import NamedThreads
import SQLite

/// Syncs the engine's group commits on a thread of its own, so that the engine thread reads
/// acks and requests while the disk makes a group durable (docs/DECISIONS.md, "A group's sync
/// runs beside the engine"). One sync at a time: the engine starts one after a commit, and
/// answers the group once it has ended (`poll()` each round, or `wait()`); or, when nothing it
/// could read meanwhile would let anything out, syncs the group itself (`syncHere`).
final class LogSyncer: @unchecked Sendable {
    private let condition = NSCondition()
    /// The log to sync, set by `start` and taken by the thread.
    private var requested: WriteAheadLogFile?
    /// The outcome of the sync started last, once it has ended.
    private var outcome: Result<Void, SQLiteError>?
    private var running = false
    private var stopped = false
    private var finished = false
    /// Called on the sync thread when a sync ends (the engine's queue wakes).
    private let whenDone: @Sendable () -> Void
    /// Called on the sync thread before each sync (`EngineOptions.logSyncWillBegin`).
    private let willBegin: (@Sendable () throws -> Void)?

    init(whenDone: @escaping @Sendable () -> Void, willBegin: (@Sendable () throws -> Void)?) {
        self.whenDone = whenDone
        self.willBegin = willBegin
        Thread.start(named: "chatfeed.fsync") { [self] in run() }
    }

    /// Starts syncing `log` (no sync may be running: `poll()` or `wait()` took the last one's).
    func start(_ log: WriteAheadLogFile) {
        condition.lock()
        precondition(!running, "one sync at a time")
        requested = log
        running = true
        outcome = nil
        condition.broadcast()
        condition.unlock()
    }

    /// The outcome of the running sync once it has ended (it is then no longer running); nil
    /// while it runs.
    func poll() -> Result<Void, SQLiteError>? {
        condition.lock()
        defer { condition.unlock() }
        return take()
    }

    /// Waits for the running sync to end and returns its outcome.
    func wait() -> Result<Void, SQLiteError> {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let outcome = take() { return outcome }
            condition.wait()
        }
    }

    /// (With the lock held.)
    private func take() -> Result<Void, SQLiteError>? {
        guard running, let outcome else { return nil }
        running = false
        self.outcome = nil
        return outcome
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
        condition.lock()
        stopped = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while true {
            while requested == nil && !stopped { condition.wait() }
            guard let log = requested else {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            requested = nil
            condition.unlock()
            let result = syncHere(log)
            condition.lock()
            outcome = result
            condition.broadcast()
            condition.unlock()
            whenDone()
            condition.lock()
        }
    }
}
