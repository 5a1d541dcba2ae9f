import ArgumentParser
import ChatModel
import Foundation

struct Send: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Post a message; prints its id.",
        discussion: """
            The sender is --from (any id: a user, or someone who is not one), else the acting user (--user): \
            the chat becomes read for a sender who is a member and unread for every other member. Sending the \
            same id with the same chat, sender, time and text again is a harmless duplicate.
            """)

    @Argument(help: "The chat's id.") var chat: String
    @Option(name: .customLong("from"), help: ArgumentHelp("The sender (default: the acting user).", valueName: "sender"))
    var sender: String?
    @Argument(help: "The message text.") var text: String
    @Option(help: "The message id (default: a fresh unique id).") var id: String?
    @Option(
        name: .customLong("at"), parsing: .unconditional,
        help: ArgumentHelp("Send time in ms since the Unix epoch, negative before 1970 (default: now).", valueName: "ms"))
    var sentAt: Int64?
    @OptionGroup var acting: ActingUserOption
    @OptionGroup var store: StoreSelection

    func validate() throws {
        if let sender, let user = acting.user, sender != user {
            throw ValidationError("--from '\(sender)' and --user '\(user)' name different senders; give one of them")
        }
    }

    func run() throws {
        // A sender named by --from alone may be anyone; the acting user must be a user.
        let sender = try self.sender ?? acting.resolve(store)
        let opened = try self.sender == nil || acting.user != nil ? store.openStore(actingAs: sender) : store.openStore()
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
