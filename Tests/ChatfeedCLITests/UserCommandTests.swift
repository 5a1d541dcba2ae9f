import ChatModel
import ChatStore
import Foundation
import Testing
import TestSupport

/// The CLI's users and memberships (issue 19; README, The CLI): `user create|remove|list`,
/// `chat create --members`, `chat add|leave|members` and `--user` on the per-user commands, each
/// checked against the store it wrote.
@Suite struct UserCommandTests {
    /// A database with users ann and bob besides me.
    static func database() throws -> (TemporaryDirectory, [String], ChatDatabase) {
        let directory = try TemporaryDirectory()
        let db = ["--database", directory.path("cli.sqlite")]
        #expect(try CLI.run(["init"] + db).status == 0)
        for user in ["ann", "bob"] {
            let created = try CLI.run(["user", "create", user, "--name", user.capitalized, "--at", "7"] + db)
            #expect(created.status == 0 && created.stderr.isEmpty, "\(created.stderr)")
        }
        return (directory, db, try ChatDatabase(path: directory.path("cli.sqlite")))
    }

    static func json(_ outcome: BuiltExecutable.Outcome) throws -> [String: Any] {
        #expect(outcome.status == 0 && outcome.stderr.isEmpty, "\(outcome.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
    }

    /// Everything a refused command must leave as it was: users, members, and each user's lists.
    static func snapshot(_ db: [String]) throws -> [String] {
        var lines = [try CLI.run(["user", "list", "--json"] + db).stdout]
        for user in ["me", "ann", "bob"] {
            for list in ["main", "archive"] {
                lines.append(try CLI.run(["chats", "--json", "--user", user, "--list", list] + db).stdout)
            }
        }
        for chat in ["g", "d"] { lines.append(try CLI.run(["chat", "members", chat, "--json"] + db).stdout) }
        lines.append(try CLI.run(["stats", "--json"] + db).stdout)
        return lines
    }

    @Test func usersAreCreatedListedAndRemoved() throws {
        let (directory, db, store) = try Self.database()
        defer { withExtendedLifetime(directory) {} }
        let created = try CLI.run(["user", "create", "cat", "--at", "9"] + db)
        #expect(created.stdout == #"{"id":"cat","name":"cat","createdAt":9}"# + "\n")
        let listed = try Self.json(try CLI.run(["user", "list", "--json"] + db))
        let users = try #require(listed["users"] as? [[String: Any]])
        #expect(users.map { $0["id"] as? String } == ["ann", "bob", "cat", "me"])
        #expect(users[0]["name"] as? String == "Ann" && users[0]["createdAt"] as? Int == 7)
        let table = try CLI.run(["user", "list"] + db)
        #expect(table.status == 0 && table.stdout.hasPrefix("USER") && table.stdout.contains("Bob"))

        #expect(try CLI.run(["chat", "create", "c", "--title", "C", "--members", "cat,ann"] + db).status == 0)
        let stats = try Self.json(try CLI.run(["stats", "--json"] + db))
        #expect(stats["users"] as? Int == 4 && stats["memberships"] as? Int == 2 && stats["chats"] as? Int == 1)
        let removed = try CLI.run(["user", "remove", "cat"] + db)
        #expect(removed.status == 0 && removed.stdout.isEmpty && removed.stderr.isEmpty)
        #expect(try store.user(id: "cat") == nil)
        #expect(try store.members(ofChat: "c").map(\.id) == ["ann"])
    }

    @Test func membersAreExactlyThoseNamedOrTheActingUser() throws {
        let (directory, db, store) = try Self.database()
        defer { withExtendedLifetime(directory) {} }
        #expect(try CLI.run(["chat", "create", "g", "--title", "G", "--members", "ann,bob", "--at", "1"] + db).status == 0)
        #expect(try CLI.run(["chat", "create", "d", "--title", "D", "--user", "ann", "--at", "2"] + db).status == 0)
        #expect(try CLI.run(["chat", "create", "m", "--title", "M", "--at", "3"] + db).status == 0)
        #expect(try store.members(ofChat: "g").map(\.id) == ["ann", "bob"])
        #expect(try store.members(ofChat: "d").map(\.id) == ["ann"])
        #expect(try store.members(ofChat: "m").map(\.id) == ["me"])

        let added = try CLI.run(["chat", "add", "d", "bob", "me"] + db)
        #expect(added.status == 0 && added.stdout.isEmpty, "\(added.stderr)")
        #expect(try CLI.run(["chat", "members", "d", "--json"] + db).stdout == #"{"members":["ann","bob","me"]}"# + "\n")
        let table = try CLI.run(["chat", "members", "d"] + db)
        #expect(table.stdout.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) }
            == ["USER", "ann", "bob", "me"])

        #expect(try CLI.run(["chat", "leave", "d", "--user", "bob"] + db).status == 0)
        #expect(try CLI.run(["chat", "leave", "d"] + db).status == 0)
        #expect(try store.members(ofChat: "d").map(\.id) == ["ann"])
        #expect(try store.chats(user: "bob", offset: 0, limit: 10).map(\.id) == ["g"])
        // Leaving a chat one is not in changes nothing.
        let again = try CLI.run(["chat", "leave", "d", "--user", "bob"] + db)
        #expect(again.status == 0 && again.stderr.isEmpty)
    }

    @Test func perUserCommandsActAsTheUserNamed() throws {
        let (directory, db, store) = try Self.database()
        defer { withExtendedLifetime(directory) {} }
        #expect(try CLI.run(["chat", "create", "g", "--title", "G", "--members", "ann,bob,me", "--at", "1"] + db).status == 0)
        #expect(try CLI.run(["chat", "create", "d", "--title", "D", "--members", "ann,bob", "--at", "2"] + db).status == 0)
        // The acting member sends: read for them, unread for every other member.
        let sent = try CLI.run(["send", "g", "--user", "bob", "hi", "--id", "m1", "--at", "10"] + db)
        #expect(sent.status == 0 && sent.stdout == "m1\n", "\(sent.stderr)")
        #expect(try CLI.run(["send", "g", "--from", "ann", "yo", "--id", "m2", "--at", "11"] + db).status == 0)
        #expect(try store.chat(id: "g", user: "bob")?.unread == 1)
        #expect(try store.chat(id: "g", user: "ann")?.unread == 0)
        #expect(try store.chat(id: "g", user: "me")?.unread == 2)

        let bobs = try Self.json(try CLI.run(["chats", "--json", "--user", "bob"] + db))
        #expect((bobs["items"] as? [[String: Any]])?.map { $0["id"] as? String } == ["g", "d"])
        #expect((bobs["unread"] as? [String: Any])?["messages"] as? Int == 1)
        let mine = try Self.json(try CLI.run(["chats", "--json"] + db))
        #expect((mine["items"] as? [[String: Any]])?.map { $0["id"] as? String } == ["g"])

        let read = try Self.json(try CLI.run(["chat", "read", "g", "--user", "bob"] + db))
        #expect(read["unread"] as? Int == 0)
        #expect(try store.chat(id: "g", user: "me")?.unread == 2)
        #expect(try CLI.run(["chat", "pin", "d", "--user", "ann"] + db).status == 0)
        #expect(try CLI.run(["chat", "mute", "g", "--user", "bob"] + db).status == 0)
        #expect(try CLI.run(["chat", "archive", "d", "--user", "bob"] + db).status == 0)
        #expect(try store.chat(id: "d", user: "ann")?.pinned == true && store.chat(id: "d", user: "bob")?.pinned == false)
        #expect(try store.chat(id: "g", user: "bob")?.muted == true && store.chat(id: "g", user: "ann")?.muted == false)
        #expect(try store.chat(id: "d", user: "bob")?.list == .archive && store.chat(id: "d", user: "ann")?.list == .main)
        #expect(try CLI.run(["chat", "unarchive", "d", "--user", "bob"] + db).status == 0)
        #expect(try CLI.run(["chat", "pin", "--order", "d,g", "--user", "bob"] + db).status == 0)
        #expect(try store.chats(user: "bob", offset: 0, limit: 10).map(\.id) == ["d", "g"])
        #expect(try store.chats(user: "ann", offset: 0, limit: 10).map(\.id) == ["d", "g"])
        #expect(try CLI.run(["chat", "unpin", "d", "--user", "ann"] + db).status == 0)
        #expect(try CLI.run(["chat", "unmute", "g", "--user", "bob"] + db).status == 0)
        #expect(try store.chat(id: "d", user: "ann")?.pinned == false && store.chat(id: "g", user: "bob")?.muted == false)

        let renamed = try Self.json(try CLI.run(["chat", "rename", "g", "--title", "Group", "--user", "me"] + db))
        #expect(renamed["title"] as? String == "Group" && renamed["unread"] as? Int == 2)
        #expect(try CLI.run(["locate", "--json", "d", "g", "--user", "bob"] + db).stdout
            == #"{"total":2,"indices":{"d":0,"g":1}}"# + "\n")
        #expect(try CLI.run(["locate", "--json", "d", "g"] + db).stdout == #"{"total":1,"indices":{"d":null,"g":0}}"# + "\n")

        // --user on messages: a chat the user is not a member of is not found.
        let messages = try CLI.run(["messages", "d", "--user", "bob", "--json"] + db)
        #expect(messages.status == 0 && messages.stdout.hasPrefix(#"{"items":[]"#), "\(messages.stderr)")
        let hidden = try CLI.run(["messages", "d", "--user", "me"] + db)
        #expect(hidden.status == 1 && hidden.stderr == "chatfeed: error: no chat with id 'd'\n" && hidden.stdout.isEmpty)
        #expect(try CLI.run(["messages", "d"] + db).status == 0)
    }

    @Test(arguments: [
        (["user", "create", "ann"], "chatfeed: error: user 'ann' already exists"),
        (["user", "remove", "zed"], "chatfeed: error: no user with id 'zed'"),
        (["chat", "create", "x", "--title", "X", "--members", "ann,zed"], "chatfeed: error: no user with id 'zed'"),
        (["chat", "create", "x", "--title", "X", "--user", "zed"], "chatfeed: error: no user with id 'zed'"),
        (["chat", "create", "x", "--title", "X", "--members", "ann,ann"], "chatfeed: error: invalid 'members[1]': repeats 'ann'; name each user once"),
        (["chat", "add", "g", "bob", "zed"], "chatfeed: error: no user with id 'zed'"),
        (["chat", "add", "nope", "bob"], "chatfeed: error: no chat with id 'nope'"),
        (["chat", "leave", "g", "--user", "zed"], "chatfeed: error: no user with id 'zed'"),
        (["chat", "members", "nope"], "chatfeed: error: no chat with id 'nope'"),
        (["chat", "read", "g", "--user", "zed"], "chatfeed: error: no user with id 'zed'"),
        (["chat", "read", "g", "--user", "bob"], "chatfeed: error: no chat with id 'g'"),
        (["chat", "rename", "g", "--title", "Y", "--user", "zed"], "chatfeed: error: no user with id 'zed'"),
        (["chat", "pin", "g", "--user", "zed"], "chatfeed: error: no user with id 'zed'"),
        (["chat", "pin", "--order", "g", "--user", "zed"], "chatfeed: error: no user with id 'zed'"),
        (["chat", "archive", "g", "--user", "zed"], "chatfeed: error: no user with id 'zed'"),
        (["chat", "mute", "g", "--user", "bob"], "chatfeed: error: no chat with id 'g'"),
        (["send", "g", "hi", "--user", "zed"], "chatfeed: error: no user with id 'zed'"),
        (["chats", "--user", "zed"], "chatfeed: error: no user with id 'zed'"),
        (["locate", "g", "--user", "zed"], "chatfeed: error: no user with id 'zed'"),
        (["messages", "g", "--user", "zed"], "chatfeed: error: no user with id 'zed'"),
        (["chats", "--user", ""], "chatfeed: error: invalid 'user': must not be empty"),
    ])
    func aRefusalIsOneLineAndChangesNothing(arguments: [String], message: String) throws {
        let (directory, db, _) = try Self.database()
        defer { withExtendedLifetime(directory) {} }
        #expect(try CLI.run(["chat", "create", "g", "--title", "G", "--members", "ann", "--at", "1"] + db).status == 0)
        #expect(try CLI.run(["chat", "create", "d", "--title", "D", "--members", "bob", "--at", "2"] + db).status == 0)
        #expect(try CLI.run(["send", "g", "--from", "ann", "hi", "--at", "3"] + db).status == 0)
        let before = try Self.snapshot(db)
        let refused = try CLI.run(arguments + db)
        #expect(refused.status == 1 && refused.stdout.isEmpty)
        #expect(refused.stderr == message + "\n")
        #expect(try Self.snapshot(db) == before)
    }

    /// Without --user a command acts as the configuration's defaultUser.
    @Test func theConfigurationChoosesTheDefaultUser() throws {
        let (directory, db, store) = try Self.database()
        defer { withExtendedLifetime(directory) {} }
        let config = directory.path("ann.json")
        try Data(#"{"defaultUser": "ann"}"#.utf8).write(to: URL(fileURLWithPath: config))
        let asAnn = db + ["--config", config]
        #expect(try CLI.run(["chat", "create", "d", "--title", "D", "--at", "1"] + asAnn).status == 0)
        #expect(try CLI.run(["send", "d", "hi", "--id", "m1", "--at", "2"] + asAnn).stdout == "m1\n")
        #expect(try store.members(ofChat: "d").map(\.id) == ["ann"])
        #expect(try store.messages(chat: "d", limit: 1).items.first?.sender == "ann")
        let listed = try Self.json(try CLI.run(["chats", "--json"] + asAnn))
        #expect((listed["items"] as? [[String: Any]])?.map { $0["id"] as? String } == ["d"])
        #expect(try Self.json(try CLI.run(["chats", "--json"] + db))["total"] as? Int == 0)
    }

    @Test func sendTakesOneSender() throws {
        let (directory, db, _) = try Self.database()
        defer { withExtendedLifetime(directory) {} }
        let both = try CLI.run(["send", "g", "--from", "ann", "--user", "bob", "hi"] + db)
        #expect(both.status == 64 && both.stderr.contains("--from 'ann' and --user 'bob'"))
    }
}
