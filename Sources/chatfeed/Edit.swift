import ArgumentParser
import ChatModel

/// `chatfeed edit ID TEXT`: `message.edit`.
struct Edit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Edit a message's text (its chat's row changes when it is the last message).")

    @Argument(help: "The message's id.") var id: String
    @Argument(help: "The new text.") var text: String
    @Option(
        name: .customLong("at"), parsing: .unconditional,
        help: ArgumentHelp("Edit time in ms since the Unix epoch (default: now).", valueName: "ms"))
    var editedAt: Int64?
    @OptionGroup var store: StoreSelection

    func run() throws {
        let opened = try store.openStore()
        try reportingFailures { _ = try opened.apply(.editMessage(id: id, text: text, editedAt: editedAt ?? currentMilliseconds())) }
    }
}

/// `chatfeed delete ID`: `message.delete`.
struct Delete: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete a message (the previous one becomes its chat's last message; unread counts drop).")

    @Argument(help: "The message's id.") var id: String
    @OptionGroup var store: StoreSelection

    func run() throws {
        let opened = try store.openStore()
        try reportingFailures { _ = try opened.apply(.deleteMessage(id: id)) }
    }
}
