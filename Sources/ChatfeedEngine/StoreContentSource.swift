import ChangeFeed
import ChatModel
import ChatStore
import Logging

/// The store as the live lists' content source (`ChatContentSource`): the lists are loaded
/// without their chats' content (titles, last messages), which is read here, on the engine
/// thread, for the rows that go out.
final class StoreContentSource: ChatContentSource {
    private let store: ChatDatabase
    private let logger: Logger
    /// Reads that failed (logged each time); `server.stats` does not show it, the log does.
    private(set) var failures = 0

    init(store: ChatDatabase, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    func loadContent(of chats: inout [Chat]) -> Bool {
        do {
            return try store.loadContent(of: &chats)
        } catch {
            failures += 1
            logger.error("cannot read chats' titles and last messages: those rows go out without them until they change", metadata: [
                "chats": "\(chats.count)", "error": "\(error)",
            ])
            return false
        }
    }
}
