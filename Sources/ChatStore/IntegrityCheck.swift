import Foundation
import NamedThreads

/// `PRAGMA quick_check` of a store's file on a connection and a thread of its own, so that a
/// daemon answers reads while the check reads the file (at 1,000,000 chats the check alone takes
/// longer than loading the lists). Its connection has SQLite's default page cache (2 MiB).
///
/// Its owner (the engine) writes nothing to the file before `wait(orCheck:)` has returned
/// without throwing.
public final class IntegrityCheck: @unchecked Sendable {
    private let done = NSCondition()
    private var outcome: Result<Void, any Error>?

    /// Starts checking the store at `path` (opened read-only with `options`' other settings);
    /// `whenDone` is called once, on the check's thread, when it has finished.
    public init(path: String, options: StoreOptions, whenDone: @escaping @Sendable () -> Void = {}) {
        var readOnlyOptions = options
        readOnlyOptions.readOnly = true
        // The check reads each page about once: a large cache would only raise the peak memory.
        readOnlyOptions.cacheSizeKiB = nil
        let readOnly = readOnlyOptions
        Thread.start(named: "chatfeed.check") { [self] in
            let result = Result { try ChatDatabase(path: path, options: readOnly).checkIntegrity() }
            done.lock()
            outcome = result
            done.broadcast()
            done.unlock()
            whenDone()
        }
    }

    /// True once the check has finished (`wait(orCheck:)` then returns at once).
    public var isFinished: Bool {
        done.lock()
        defer { done.unlock() }
        return outcome != nil
    }

    /// Waits for the check. Throws `ChatStoreError.damaged` when it found damage; when the file
    /// could not be opened a second time (read-only media, a full disk), runs the check on
    /// `store` instead.
    public func wait(orCheck store: ChatDatabase) throws {
        done.lock()
        while outcome == nil { done.wait() }
        let result = outcome!
        done.unlock()
        guard case .failure(let error) = result else { return }
        if case .damaged? = error as? ChatStoreError { throw error }
        try store.checkIntegrity()
    }
}
