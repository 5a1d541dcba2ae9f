import ArgumentParser
import ChatModel
import WireProtocol

struct Messages: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a chat's messages, newest first.")

    @Argument(help: "The chat's id.") var chat: String
    @Option(help: "How many messages to show.") var limit = 50
    @Option(help: ArgumentHelp("Only messages sent before this time (ms since the Unix epoch).", valueName: "ms"))
    var before: Int64?
    @Flag(help: "Print the messages.list result as JSON.") var json = false
    @OptionGroup var store: StoreSelection

    func validate() throws {
        if limit < 0 { throw ValidationError("--limit must be 0 or more") }
    }

    func run() throws {
        let opened = try store.openStore()
        let items = try reportingFailures { try opened.messages(chat: chat, before: before, limit: limit) }
        if json {
            output(WireResults.messagesList(items: items).description)
            return
        }
        let now = currentMilliseconds()
        var table = TextTable(headers: ["WHEN", "FROM", "TEXT", "ID"])
        for message in items {
            table.append([
                relativeTime(message.sentAt, now: now), message.sender,
                message.text + (message.editedAt == nil ? "" : " (edited)"), message.id,
            ])
        }
        output(table.render())
    }
}
