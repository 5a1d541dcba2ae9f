import ChatStore
import Foundation
import Testing
import TestSupport

/// The CLI as a user types it (issue 23): writes never create a database, `diff` reads pipes,
/// negative times, usage errors as argument-parser reports them, and the message commands.
@Suite struct CLIUsageTests {
    @Test func aWriteToAMissingDatabaseFailsAndCreatesNothing() throws {
        let directory = try TemporaryDirectory()
        let typo = directory.path("typo.sqlite")
        let created = try CLI.run(["chat", "create", "x", "--title", "X", "--database", typo])
        #expect(created.status == 1)
        #expect(created.stderr.hasPrefix("chatfeed: error: no database at '\(typo)'"), "\(created.stderr)")
        #expect(!FileManager.default.fileExists(atPath: typo))
    }

    @Test func diffReadsPipes() throws {
        let script = #"""
            "$1" diff <(echo '["a","b","c"]') <(echo '["c","a","b"]')
            """#
        let outcome = try BuiltExecutable.run(executable: "/bin/bash", ["-c", script, "bash", CLI.executable])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout == #"{"batches":[{"deletes":[],"inserts":[],"moves":[{"from":2,"to":0}],"updates":[]}]}"# + "\n")
    }

    @Test func negativeTimesAreValuesNotOptions() throws {
        let directory = try TemporaryDirectory()
        let db = ["--database", directory.path("cli.sqlite")]
        #expect(try CLI.run(["init"] + db).status == 0)
        let created = try CLI.run(["chat", "create", "old", "--title", "Old", "--at", "-5"] + db)
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains(#""createdAt":-5"#))
        let sent = try CLI.run(["send", "old", "--from", "ann", "before 1970", "--id", "m1", "--at", "-3"] + db)
        #expect(sent.status == 0, "\(sent.stderr)")
        let listed = try CLI.run(["messages", "old", "--json", "--before", "-2"] + db)
        #expect(listed.status == 0 && listed.stdout.contains(#""id":"m1""#), "\(listed.stderr)")
    }

    /// argument-parser's conventions, as the README says: `Error: …`, the usage, exit status 64.
    @Test func aUsageErrorIsArgumentParsersWithExitStatus64() throws {
        let outcome = try CLI.run(["chat", "create", "x"])
        #expect(outcome.status == 64)
        #expect(outcome.stderr.hasPrefix("Error: Missing expected argument '--title <title>'"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("Usage: chatfeed chat create"))
    }

    @Test func editDeleteAndPinOrderWriteTheStore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("cli.sqlite")
        let db = ["--database", path]
        #expect(try CLI.run(["init"] + db).status == 0)
        for (id, at) in [("a", "1"), ("b", "2"), ("c", "3")] {
            #expect(try CLI.run(["chat", "create", id, "--title", id.uppercased(), "--at", at] + db).status == 0)
        }
        #expect(try CLI.run(["send", "a", "--from", "ann", "first", "--id", "m1", "--at", "10"] + db).status == 0)
        #expect(try CLI.run(["send", "a", "--from", "ann", "second", "--id", "m2", "--at", "11"] + db).status == 0)
        let edited = try CLI.run(["edit", "m2", "second, edited", "--at", "12"] + db)
        #expect(edited.status == 0, "\(edited.stderr)")
        let store = try ChatDatabase(path: path)
        #expect(try store.chat(id: "a")?.lastMessage?.text == "second, edited")
        let deleted = try CLI.run(["delete", "m2"] + db)
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(try store.chat(id: "a")?.lastMessage?.id == "m1")
        #expect(try CLI.run(["delete", "m2"] + db).status == 0, "a retried delete succeeds")
        #expect(try CLI.run(["delete", "nope"] + db).status == 1, "an unknown message is not found")

        let pinned = try CLI.run(["chat", "pin", "--order", "b,c"] + db)
        #expect(pinned.status == 0, "\(pinned.stderr)")
        let order = try CLI.run(["chats", "--json"] + db)
        let items = try #require(
            (try JSONSerialization.jsonObject(with: Data(order.stdout.utf8)) as? [String: Any])?["items"] as? [[String: Any]])
        #expect(items.map { $0["id"] as? String } == ["b", "c", "a"])
        #expect(try CLI.run(["chat", "pin", "--order", ""] + db).status == 0)
        #expect(try store.chat(id: "b")?.pinned == false)
        #expect(try CLI.run(["chat", "pin", "a", "--order", "b"] + db).status == 64)
    }
}
