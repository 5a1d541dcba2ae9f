import ArgumentParser
import ChatModel
import ChatStore
import WireProtocol

struct Messages: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a chat's messages, newest first.",
        discussion: """
            When more messages follow, the last line gives the --cursor that shows the next page. With --user, \
            a chat that user is not a member of is not found.
            """)

    @Argument(help: "The chat's id.") var chat: String
    @Option(help: "How many messages to show (1 to 10000).") var limit = MessagesListParams.defaultLimit
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Only messages sent before this time (ms since the Unix epoch, negative before 1970).", valueName: "ms"))
    var before: Int64?
    @Option(help: ArgumentHelp("Continue after the page that printed this cursor.", valueName: "cursor"))
    var cursor: String?
    @Flag(help: "Print the messages.list result as JSON.") var json = false
    @Option(help: ArgumentHelp("Read as this user: only a chat they are a member of (default: any chat).", valueName: "id"))
    var user: String?
    @OptionGroup var store: StoreSelection
    @OptionGroup var access: ReadOnlyOption

    func validate() throws {
        if !(1...MessagesListParams.maxLimit).contains(limit) {
            throw ValidationError("--limit must be between 1 and \(MessagesListParams.maxLimit)")
        }
    }

    func run() throws {
        let opened = try user.map { try store.openStore(actingAs: $0, readOnly: access.readOnly) }
            ?? store.openStore(readOnly: access.readOnly)
        let page = try reportingFailures {
            let after = try cursor.map { try MessageCursor.decode($0, chat: chat) }
            if let user {
                try Identifier.validate(chat, field: "chat")
                if try opened.chat(id: chat, user: user) == nil { throw ChatError.notFound(kind: "chat", id: chat) }
            }
            return try opened.messages(chat: chat, before: before, after: after, limit: limit)
        }
        if json {
            outputJSON { WireResults.appendMessagesList(chat: chat, page: page, to: &$0) }
            return
        }
        let now = currentMilliseconds()
        var table = TextTable(headers: ["WHEN", "FROM", "TEXT", "ID"])
        for message in page.items {
            table.append([
                relativeTime(message.sentAt, now: now), message.sender,
                message.text + (message.editedAt == nil ? "" : " (edited)"), message.id,
            ])
        }
        output(table.render())
        if let next = page.next {
            output("more: --cursor \(MessageCursor.encode(chat: chat, after: next))")
        }
    }
}
