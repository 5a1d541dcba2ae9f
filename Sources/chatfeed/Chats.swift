import ArgumentParser
import ChatModel
import WireProtocol
import ChatStore

struct Chats: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the chat list, newest first.")

    @Option(help: "How many chats to show.") var limit = 100
    @Option(help: "How many chats to skip from the top.") var offset = 0
    @Flag(help: "Print the chats.list result as JSON.") var json = false
    @OptionGroup var store: StoreSelection

    func validate() throws {
        if limit < 0 { throw ValidationError("--limit must be 0 or more") }
        if offset < 0 { throw ValidationError("--offset must be 0 or more") }
    }

    func run() throws {
        let opened = try store.openStore()
        let (total, items) = try reportingFailures { (try opened.chatCount(), try opened.chats(offset: offset, limit: limit)) }
        if json {
            outputJSON { WireResults.appendChatsList(total: total, items: items, to: &$0) }
            return
        }
        let now = currentMilliseconds()
        var table = TextTable(headers: ["#", "CHAT", "TITLE", "LAST MESSAGE", "WHEN", "UNREAD"])
        for (index, chat) in items.enumerated() {
            table.append([
                String(offset + index), chat.id, chat.title,
                chat.lastMessage.map { "\($0.sender): \($0.text)" } ?? "—",
                relativeTime(chat.lastMessageDate, now: now),
                chat.unread == 0 ? "" : String(chat.unread),
            ])
        }
        output(table.render())
        output("\(items.count) of \(total) chats")
    }
}
