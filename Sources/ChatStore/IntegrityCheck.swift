import Foundation

/// `PRAGMA quick_check` of a store's file on a connection and a thread of its own, so that a
/// start-up reads the lists while the check reads the file (at 1,000,000 chats the check alone is
/// about a third of the start-up). The check's page cache goes with its connection.
public final class IntegrityCheck: @unchecked Sendable {
    private let done = NSCondition()
    private var outcome: Result<Void, any Error>?

    /// Starts checking the store at `path` (opened read-only with `options`' other settings).
    public init(path: String, options: StoreOptions) {
        var readOnlyOptions = options
        readOnlyOptions.readOnly = true
        let readOnly = readOnlyOptions
        let thread = Thread { [self] in
            let result = Result { try ChatDatabase(path: path, options: readOnly).checkIntegrity() }
            done.lock()
            outcome = result
            done.signal()
            done.unlock()
        }
        thread.name = "chatfeed-quick-check"
        thread.start()
    }

    /// Waits for the check. Throws `ChatStoreError.damaged` when it found damage; when the file
    /// could not be opened a second time (read-only media, a full disk), runs the check on
    /// `store` instead.
    public func wait(orCheck store: ChatDatabase) throws {
        done.lock()
        while outcome == nil { done.wait() }
        let result = outcome!
        done.unlock()
        do {
            try result.get()
        } catch ChatStoreError.damaged(let path, let detail) {
            throw ChatStoreError.damaged(path: path, detail: detail)
        } catch {
            try store.checkIntegrity()
        }
    }
}
