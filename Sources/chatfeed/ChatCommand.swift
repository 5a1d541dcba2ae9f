import ArgumentParser
import WireProtocol
import ChatModel
import ChatStore

struct ChatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat",
        abstract: "Create, rename, remove, read, pin, archive or mute a chat.",
        subcommands: [
            Create.self, Rename.self, Remove.self, Read.self, Pin.self, Unpin.self, Archive.self, Unarchive.self,
            Mute.self, Unmute.self,
        ])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a chat; prints it as JSON.")

        @Argument(help: "The new chat's id.") var id: String
        @Option(help: "The chat's title.") var title: String
        @Option(name: .customLong("at"), help: ArgumentHelp("Creation time in ms since the Unix epoch (default: now).", valueName: "ms"))
        var createdAt: Int64?
        @OptionGroup var store: StoreSelection

        func run() throws {
            try applyPrintingChat(.createChat(id: id, title: title, createdAt: createdAt ?? currentMilliseconds()), store, create: true)
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a chat; prints it as JSON.")

        @Argument(help: "The chat's id.") var id: String
        @Option(help: "The new title.") var title: String
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(.renameChat(id: id, title: title), store) }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a chat and its messages.")

        @Argument(help: "The chat's id.") var id: String
        @OptionGroup var store: StoreSelection

        func run() throws {
            let opened = try store.openStore()
            try reportingFailures { _ = try opened.apply(.removeChat(id: id)) }
        }
    }

    struct Read: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Mark a chat read (unread → 0); prints it as JSON.")

        @Argument(help: "The chat's id.") var id: String
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(.markRead(id: id), store) }
    }

    struct Pin: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pin a chat on top of its list's pinned chats (at most maxPinnedChats per list); prints it as JSON.")

        @Argument(help: "The chat's id.") var id: String
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(.pinChat(id: id), store) }
    }

    struct Unpin: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Return a pinned chat to its date place; prints it as JSON.")

        @Argument(help: "The chat's id.") var id: String
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(.unpinChat(id: id), store) }
    }

    struct Archive: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move a chat to the archive (unpinned); prints it as JSON.")

        @Argument(help: "The chat's id.") var id: String
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(.moveChat(id: id, to: .archive), store) }
    }

    struct Unarchive: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move a chat back to the main list (unpinned); prints it as JSON.")

        @Argument(help: "The chat's id.") var id: String
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(.moveChat(id: id, to: .main), store) }
    }

    struct Mute: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mute a chat: its unread messages leave the list's unmuted counters; prints it as JSON.")

        @Argument(help: "The chat's id.") var id: String
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(.setMuted(id: id, muted: true), store) }
    }

    struct Unmute: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unmute a chat; prints it as JSON.")

        @Argument(help: "The chat's id.") var id: String
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(.setMuted(id: id, muted: false), store) }
    }
}

private func applyPrintingChat(_ event: ChatEvent, _ selection: StoreSelection, create: Bool = false) throws {
    let store = try selection.openStore(create: create)
    let result = try reportingFailures { try store.apply(event) }
    if case .chat(let chat) = result { outputJSON(chat.appendJSON) }
}
