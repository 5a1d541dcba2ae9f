import ArgumentParser
import ChatModel
import Foundation

struct Send: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Post a message; prints its id.",
        discussion: "Sending the same id with the same chat, sender, time and text again is a harmless duplicate.")

    @Argument(help: "The chat's id.") var chat: String
    @Option(name: .customLong("from"), help: ArgumentHelp("The sender.", valueName: "sender")) var sender: String
    @Argument(help: "The message text.") var text: String
    @Option(help: "The message id (default: a fresh unique id).") var id: String?
    @Option(
        name: .customLong("at"), parsing: .unconditional,
        help: ArgumentHelp("Send time in ms since the Unix epoch, negative before 1970 (default: now).", valueName: "ms"))
    var sentAt: Int64?
    @OptionGroup var store: StoreSelection

    func run() throws {
        let opened = try store.openStore()
        let message = Message(
            id: id ?? UUID().uuidString.lowercased(), chat: chat, sender: sender, text: text,
            sentAt: sentAt ?? currentMilliseconds())
        let result = try reportingFailures { try opened.apply(.postMessage(message)) }
        output(message.id)
        if case .posted(duplicate: true) = result {
            FileHandle.standardError.write(Data("chatfeed: message '\(message.id)' was already posted; nothing changed\n".utf8))
        }
    }
}
