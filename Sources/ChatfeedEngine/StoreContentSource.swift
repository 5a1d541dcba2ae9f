import ChangeFeed
import ChatModel
import ChatStore
import Logging

/// The store as the live lists' content source (`ChatContentSource`): the lists are loaded
/// without their chats' content (titles, last messages), which is read here for the rows that
/// go out — on the engine thread, through its connection; or, while a group's feed work runs
/// beside the next group's statements (`Engine.feedWorker`), on the worker's thread through a read-only
/// connection of its own, in a snapshot of the file as the groups before left it.
final class StoreContentSource: ChatContentSource {
    private let store: ChatDatabase
    private let logger: Logger
    /// Where the reader beside a commit opens (`beginReadingBeside`): the store's file, read-only.
    private let readerPath: String
    private let readerOptions: StoreOptions
    /// The read-only connection, opened at the first feed work beside a commit; nil before, and
    /// for good once it could not open.
    private var reader: ChatDatabase?
    private var readerFailed = false
    /// True between `beginReadingBeside()` and `endReadingBeside()`: reads go to `reader`.
    private var readsBeside = false
    /// Reads that failed (logged each time); `server.stats` does not show it, the log does.
    private(set) var failures = 0
    /// While a group commit's sync runs (`Engine.finishUnsyncedGroup`): the chats whose title or
    /// last message it changed, which are not to go out before it is durable.
    var unsyncedContent: UnsyncedContent? {
        didSet { readUnsyncedContent = false }
    }
    /// A read since `unsyncedContent` was set took the content of one of those chats.
    private(set) var readUnsyncedContent = false

    init(store: ChatDatabase, path: String, options: StoreOptions, logger: Logger) {
        self.store = store
        self.logger = logger
        readerPath = path
        var readOnly = options
        readOnly.readOnly = true
        // (SQLite's default page cache, 2 MiB: it starts over at each snapshot the writer changed.)
        readOnly.cacheSizeKiB = nil
        readerOptions = readOnly
    }

    /// Called on the engine thread before it hands feed work to another thread, which then reads
    /// through the reader in a snapshot of the file as it is now (every group before committed,
    /// none after): the content that the engine thread would read now. False when the reader
    /// could not open or begin (the engine then does the work itself).
    func beginReadingBeside() -> Bool {
        if reader == nil, !readerFailed {
            do {
                reader = try ChatDatabase(path: readerPath, options: readerOptions)
            } catch {
                readerFailed = true
                logger.warning("cannot open a second, read-only connection: each group's feed work runs on the engine thread, not beside the next group", metadata: [
                    "database": "\(readerPath)", "error": "\(error)",
                ])
            }
        }
        guard let reader else { return false }
        do {
            try reader.beginReadSnapshot()
        } catch {
            logger.warning("cannot read the database on the second connection: this group's feed work runs on the engine thread", metadata: ["error": "\(error)"])
            return false
        }
        readsBeside = true
        return true
    }

    /// Called by the feed work beside a commit when it ends, on its thread (the engine thread
    /// then waits for it), or on the engine thread.
    func endReadingBeside() {
        guard readsBeside else { return }
        readsBeside = false
        reader?.endReadSnapshot()
    }

    /// Closes the reader (the store's last checkpoint empties the log: nothing should read it).
    func closeReader() {
        endReadingBeside()
        reader = nil
    }

    func loadContent(of chats: inout [Chat]) -> Bool {
        if let unsyncedContent, !readUnsyncedContent {
            readUnsyncedContent = chats.contains { unsyncedContent.contains($0.id) }
        }
        do {
            if readsBeside, let reader { return try reader.loadContent(of: &chats) }
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
