import ArgumentParser
import ChatModel
import ChatStore
import JSONCodec
import WireProtocol

/// `chatfeed user create|remove|list`: the accounts that have chat lists (docs/PROTOCOL.md, Users and sessions).
struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Create, remove or list users.",
        subcommands: [Create.self, Remove.self, List.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a user with empty chat lists; prints it as JSON.")

        @Argument(help: "The new user's id.") var id: String
        @Option(help: "The user's name (default: the id).") var name: String?
        @Option(
            name: .customLong("at"), parsing: .unconditional,
            help: ArgumentHelp("Creation time in ms since the Unix epoch, negative before 1970 (default: now).", valueName: "ms"))
        var createdAt: Int64?
        @OptionGroup var store: StoreSelection

        func run() throws {
            let opened = try store.openStore()
            let user = User(id: id, name: name ?? id, createdAt: createdAt ?? currentMilliseconds())
            try reportingFailures { _ = try opened.apply(.createUser(id: user.id, name: user.name, createdAt: user.createdAt)) }
            output(WireResults.user(user).description)
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a user: their chats leave their lists; their messages stay.")

        @Argument(help: "The user's id.") var id: String
        @OptionGroup var store: StoreSelection

        func run() throws {
            let opened = try store.openStore()
            try reportingFailures { _ = try opened.apply(.removeUser(id: id)) }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the users, by id.")

        @Flag(help: "Print {\"users\":[user]} as JSON.") var json = false
        @OptionGroup var store: StoreSelection
        @OptionGroup var access: ReadOnlyOption

        func run() throws {
            let opened = try store.openStore(readOnly: access.readOnly)
            let users = try reportingFailures { try opened.users() }
            if json {
                output(JSONValue.object(["users": .array(users.map(WireResults.user))]).description)
                return
            }
            output(usersTable(users))
        }
    }
}

/// A table of users: id, name and when each was created.
func usersTable(_ users: [User]) -> String {
    let now = currentMilliseconds()
    var table = TextTable(headers: ["USER", "NAME", "CREATED"])
    for user in users {
        table.append([user.id, user.name, relativeTime(user.createdAt, now: now)])
    }
    return table.render()
}
