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
    /// While a group commit's sync runs (`Engine.finishUnsyncedGroup`): the chats whose title or
    /// last message it changed, which are not to go out before it is durable.
    var unsyncedContent: UnsyncedContent? {
        didSet { readUnsyncedContent = false }
    }
    /// A read since `unsyncedContent` was set took the content of one of those chats.
    private(set) var readUnsyncedContent = false

    init(store: ChatDatabase, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    func loadContent(of chats: inout [Chat]) -> Bool {
        if let unsyncedContent, !readUnsyncedContent {
            readUnsyncedContent = chats.contains { unsyncedContent.contains($0.id) }
        }
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

/// What a group commit changed of the chats' content (titles, last messages), found from its
/// events when first asked: most syncs end before anything reads a chat's content, and finding
/// it for every group (a set of the chats its posts name) was 1.5% of the engine thread in a
/// saturated ingest.
final class UnsyncedContent {
    private let events: [ChatEvent]
    /// The chats changed; nil when any chat's may have (an edit or deletion of a message names
    /// the message only).
    private lazy var chats: Set<String>? = Self.chats(changedBy: events)

    init(changedBy events: [ChatEvent]) {
        self.events = events
    }

    func contains(_ chat: String) -> Bool {
        chats?.contains(chat) ?? true
    }

    private static func chats(changedBy events: [ChatEvent]) -> Set<String>? {
        var chats = Set<String>()
        for event in events {
            switch event {
            case .createChat(let id, _, _, _), .renameChat(let id, _, _), .removeChat(let id): chats.insert(id)
            case .postMessage(let message): chats.insert(message.chat)
            case .editMessage, .deleteMessage:
                // (A chat's last message may change; the event names the message only.)
                return nil
            case .createUser, .removeUser, .addMembers, .removeMembers, .markRead, .pinChat, .unpinChat,
                .setPinned, .moveChat, .setMuted:
                continue  // no title or last message changes
            }
        }
        return chats
    }
}
