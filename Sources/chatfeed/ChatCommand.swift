import ArgumentParser
import WireProtocol
import ChatModel
import ChatStore

struct ChatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat",
        abstract: "Create, rename, remove, read, pin, archive or mute a chat; add or list its members, or leave it.",
        subcommands: [
            Create.self, Add.self, Leave.self, Members.self, Rename.self, Remove.self, Read.self, Pin.self, Unpin.self,
            Archive.self, Unarchive.self, Mute.self, Unmute.self,
        ])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a chat; prints it as JSON.",
            discussion: "Its members are exactly the users of --members, or the acting user (--user) alone without it.")

        @Argument(help: "The new chat's id.") var id: String
        @Option(help: "The chat's title.") var title: String
        @Option(help: ArgumentHelp("The chat's members, comma-separated user ids (\"\": none).", valueName: "ids"))
        var members: String?
        @Option(
            name: .customLong("at"), parsing: .unconditional,
            help: ArgumentHelp("Creation time in ms since the Unix epoch, negative before 1970 (default: now).", valueName: "ms"))
        var createdAt: Int64?
        @OptionGroup var acting: ActingUserOption
        @OptionGroup var store: StoreSelection

        func run() throws {
            // A write never creates a database (README, The CLI): `chatfeed init` does.
            let opened: ChatDatabase
            let members: [String]
            if let list = self.members {
                opened = try store.openStore()
                members = commaSeparated(list)
            } else {
                let user = try acting.resolve(store)
                opened = try store.openStore(actingAs: user)
                members = [user]
            }
            let event = ChatEvent.createChat(id: id, title: title, createdAt: createdAt ?? currentMilliseconds(), members: members)
            try applyPrintingChat(event, opened)
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make users members of a chat (each gets it in main, nothing unread); members stay as they are.")

        @Argument(help: "The chat's id.") var chat: String
        @Argument(help: "The users' ids.") var users: [String]
        @OptionGroup var store: StoreSelection

        func validate() throws {
            if users.isEmpty { throw ValidationError("give at least one user id") }
        }

        func run() throws {
            let opened = try store.openStore()
            try reportingFailures { _ = try opened.apply(.addMembers(chat: chat, users: users)) }
        }
    }

    struct Leave: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The acting user (--user) leaves a chat: it goes from their lists; leaving a chat one is not in changes nothing.")

        @Argument(help: "The chat's id.") var chat: String
        @OptionGroup var acting: ActingUserOption
        @OptionGroup var store: StoreSelection

        func run() throws {
            let user = try acting.resolve(store)
            let opened = try store.openStore(actingAs: user)
            try reportingFailures { _ = try opened.apply(.removeMembers(chat: chat, users: [user])) }
        }
    }

    struct Members: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a chat's members, by id.")

        @Argument(help: "The chat's id.") var chat: String
        @Flag(help: "Print the chat.members result as JSON.") var json = false
        @OptionGroup var store: StoreSelection
        @OptionGroup var access: ReadOnlyOption

        func run() throws {
            let opened = try store.openStore(readOnly: access.readOnly)
            let members = try reportingFailures { try opened.members(ofChat: chat) }
            if json {
                output(WireResults.chatMembers(members.map(\.id)).description)
                return
            }
            output(usersTable(members))
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rename a chat for every member; prints it as JSON, as the acting user sees it.")

        @Argument(help: "The chat's id.") var id: String
        @Option(help: "The new title.") var title: String
        @OptionGroup var acting: ActingUserOption
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(store, acting) { .renameChat(id: id, title: title, user: $0) } }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a chat, its messages and its memberships.")

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
        @OptionGroup var acting: ActingUserOption
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(store, acting) { .markRead(id: id, user: $0) } }
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
        @OptionGroup var acting: ActingUserOption
        @OptionGroup var store: StoreSelection

        func validate() throws {
            if (id == nil) == (order == nil) { throw ValidationError("give a chat's id or --order, not both") }
        }

        func run() throws {
            if let id { return try applyPrintingChat(store, acting) { .pinChat(id: id, user: $0) } }
            let user = try acting.resolve(store)
            let opened = try store.openStore(actingAs: user)
            try reportingFailures { _ = try opened.apply(.setPinned(list: list, chats: commaSeparated(order ?? ""), user: user)) }
        }
    }

    struct Unpin: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Return a pinned chat to its date place; prints it as JSON.")

        @Argument(help: "The chat's id.") var id: String
        @OptionGroup var acting: ActingUserOption
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(store, acting) { .unpinChat(id: id, user: $0) } }
    }

    struct Archive: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move a chat to the archive (unpinned); prints it as JSON.")

        @Argument(help: "The chat's id.") var id: String
        @OptionGroup var acting: ActingUserOption
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(store, acting) { .moveChat(id: id, to: .archive, user: $0) } }
    }

    struct Unarchive: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move a chat back to the main list (unpinned); prints it as JSON.")

        @Argument(help: "The chat's id.") var id: String
        @OptionGroup var acting: ActingUserOption
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(store, acting) { .moveChat(id: id, to: .main, user: $0) } }
    }

    struct Mute: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mute a chat: its unread messages leave the list's unmuted counters; prints it as JSON.")

        @Argument(help: "The chat's id.") var id: String
        @OptionGroup var acting: ActingUserOption
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(store, acting) { .setMuted(id: id, muted: true, user: $0) } }
    }

    struct Unmute: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unmute a chat; prints it as JSON.")

        @Argument(help: "The chat's id.") var id: String
        @OptionGroup var acting: ActingUserOption
        @OptionGroup var store: StoreSelection

        func run() throws { try applyPrintingChat(store, acting) { .setMuted(id: id, muted: false, user: $0) } }
    }
}

/// Applies the event that `event` makes for the acting user and prints the chat it returns.
private func applyPrintingChat(
    _ selection: StoreSelection, _ acting: ActingUserOption, _ event: (String) -> ChatEvent
) throws {
    let user = try acting.resolve(selection)
    try applyPrintingChat(event(user), try selection.openStore(actingAs: user))
}

private func applyPrintingChat(_ event: ChatEvent, _ store: ChatDatabase) throws {
    let result = try reportingFailures { try store.apply(event) }
    if case .chat(let chat) = result { outputJSON(chat.appendJSON) }
}

/// "a,b,c" → ["a", "b", "c"]; "" → [].
func commaSeparated(_ list: String) -> [String] {
    list.split(separator: ",", omittingEmptySubsequences: true).map(String.init)
}
