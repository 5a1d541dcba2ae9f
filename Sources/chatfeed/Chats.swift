import ArgumentParser
import ChatModel
import ChatStore
import WireProtocol

extension ChatList: ExpressibleByArgument {}

struct Chats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a chat list: pinned chats first, then newest first, with its unread counters.")

    @Option(help: "The list: main or archive.") var list = ChatList.main
    @Flag(help: "Only the chats with unread messages.") var unread = false
    @Option(help: "How many chats to show.") var limit = 100
    @Option(help: "How many chats to skip from the top.") var offset = 0
    @Flag(help: "Print the chats.list result as JSON.") var json = false
    @OptionGroup var acting: ActingUserOption
    @OptionGroup var store: StoreSelection
    @OptionGroup var access: ReadOnlyOption

    func validate() throws {
        if limit < 0 { throw ValidationError("--limit must be 0 or more") }
        if offset < 0 { throw ValidationError("--offset must be 0 or more") }
    }

    func run() throws {
        let user = try acting.resolve(store)
        let opened = try store.openStore(actingAs: user, readOnly: access.readOnly)
        let view = ChatListView(list: list, unreadOnly: unread)
        let (counters, items) = try reportingFailures { try opened.page(of: view, user: user, offset: offset, limit: limit) }
        if json {
            outputJSON { WireResults.appendChatsList(total: counters.total, unread: counters.unread, items: items, to: &$0) }
            return
        }
        let now = currentMilliseconds()
        var table = TextTable(headers: ["#", "", "CHAT", "TITLE", "LAST MESSAGE", "WHEN", "UNREAD"])
        for (index, chat) in items.enumerated() {
            table.append([
                String(offset + index), Self.marks(chat), chat.id, chat.title,
                chat.lastMessage.map { "\($0.sender): \($0.text)" } ?? "—",
                relativeTime(chat.lastMessageDate, now: now),
                chat.unread == 0 ? "" : String(chat.unread),
            ])
        }
        output(table.render())
        let shown = unread ? "\(items.count) unread chats shown" : "\(items.count) of \(counters.total) chats"
        output("\(list): \(shown); unread: \(Self.describe(counters.unread))")
    }

    /// "P" for a pinned chat, "M" for a muted one.
    static func marks(_ chat: Chat) -> String {
        (chat.pinned ? "P" : "") + (chat.muted ? "M" : "")
    }

    /// The counters as a user reads them: the badge first.
    static func describe(_ unread: UnreadCounters) -> String {
        "\(unread.unmutedMessages) messages in \(unread.unmutedChats) chats"
            + (unread.chats > unread.unmutedChats || unread.messages > unread.unmutedMessages
                ? " (\(unread.messages) in \(unread.chats) with muted chats)" : "")
    }
}
