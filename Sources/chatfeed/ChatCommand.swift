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
        @Option(
            name: .customLong("at"), parsing: .unconditional,
            help: ArgumentHelp("Creation time in ms since the Unix epoch, negative before 1970 (default: now).", valueName: "ms"))
        var createdAt: Int64?
        @OptionGroup var store: StoreSelection

        func run() throws {
            // A write never creates a database (README, The CLI): `chatfeed init` does.
            try applyPrintingChat(.createChat(id: id, title: title, createdAt: createdAt ?? currentMilliseconds()), store)
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
            abstract: "Pin a chat on top of its list's pinned chats, or set a list's pinned chats (--order).",
            discussion: """
                'chat pin ID' pins one chat and prints it as JSON. 'chat pin --order a,b,c [--list archive]' pins \
                exactly those chats of the list, a on top, and unpins the list's others ('--order ""' unpins them \
                all). A list holds at most maxPinnedChats pinned chats (configuration, default 5).
                """)

        @Argument(help: "The chat's id.") var id: String?
        @Option(help: ArgumentHelp("The list's pinned chats, top first, comma-separated.", valueName: "ids"))
        var order: String?
        @Option(help: "The list --order sets: main or archive.") var list = ChatList.main
        @OptionGroup var store: StoreSelection

        func validate() throws {
            if (id == nil) == (order == nil) { throw ValidationError("give a chat's id or --order, not both") }
        }

        func run() throws {
            if let id { return try applyPrintingChat(.pinChat(id: id), store) }
            let chats = (order ?? "").split(separator: ",", omittingEmptySubsequences: true).map(String.init)
            let opened = try store.openStore()
            try reportingFailures { _ = try opened.apply(.setPinned(list: list, chats: chats)) }
        }
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

private func applyPrintingChat(_ event: ChatEvent, _ selection: StoreSelection) throws {
    let store = try selection.openStore()
    let result = try reportingFailures { try store.apply(event) }
    if case .chat(let chat) = result { outputJSON(chat.appendJSON) }
}
