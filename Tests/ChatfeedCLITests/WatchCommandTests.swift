import Foundation
import Testing
import TestSupport

@Suite("chatfeed watch")
struct WatchCommandTests {
    @Test("--demo renders the live list through the UIKit model and stops cleanly")
    func demo() throws {
        let outcome = try BuiltExecutable.run("chatfeed", ["watch", "--demo", "--duration", "2", "--limit", "6"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let frames = outcome.stdout.components(separatedBy: "chatfeed watch — main: ").dropFirst()
        #expect(frames.count >= 2, "the list was rendered again as batches arrived")
        let last = try #require(frames.last)
        #expect(last.split(separator: "\n").count == 10, "a title, the legend (two lines at 100 columns), the column header and the six rows of the window")
        #expect(last.split(separator: "\n").first?.hasSuffix("— demo") == true)
        #expect(!outcome.stdout.contains("breaks UIKit"))
    }

    @Test("--demo makes several users: direct and group chats of the watched user, with messages from different members")
    func demoUsers() throws {
        let outcome = try BuiltExecutable.run("chatfeed", ["watch", "--demo", "--duration", "2", "--limit", "30"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let last = try #require(outcome.stdout.components(separatedBy: "chatfeed watch — main: ").last)
        // Ten direct chats with the watched user, "Me & …" (some may have been left or removed since).
        #expect(last.components(separatedBy: "Me & ").count - 1 >= 5, "\(last)")
        #expect(["Family", "Book club", "Team standup", "Flat 3B"].contains { last.contains($0) }, "\(last)")
        let senders = Set(["alice", "bob", "chen", "dara", "emeka", "fatima", "gustav", "hana", "ivan", "jonas", "kiri", "lena", "mateo", "nadia"]
            .filter { last.contains(" \($0): ") })
        #expect(senders.count >= 3, "the last messages come from several members: \(senders)")
        #expect(!outcome.stdout.contains("breaks UIKit"))
    }

    @Test("--user watches that user's list; an unknown user is one error line")
    func user() throws {
        let directory = try TemporaryDirectory()
        let db = ["--database", directory.path("u.sqlite")]
        #expect(try BuiltExecutable.run("chatfeed", ["init"] + db).status == 0)
        #expect(try BuiltExecutable.run("chatfeed", ["user", "create", "ann"] + db).status == 0)
        #expect(try BuiltExecutable.run("chatfeed", ["chat", "create", "a", "--title", "Ann's room", "--user", "ann"] + db).status == 0)
        #expect(try BuiltExecutable.run("chatfeed", ["chat", "create", "m", "--title", "My room"] + db).status == 0)
        let ann = try BuiltExecutable.run("chatfeed", ["watch", "--user", "ann", "--duration", "0.5"] + db)
        #expect(ann.status == 0, "\(ann.stderr)")
        #expect(ann.stdout.contains("Ann's room") && !ann.stdout.contains("My room"))
        let mine = try BuiltExecutable.run("chatfeed", ["watch", "--duration", "0.5"] + db)
        #expect(mine.stdout.contains("My room") && !mine.stdout.contains("Ann's room"))
        let unknown = try BuiltExecutable.run("chatfeed", ["watch", "--user", "zed", "--duration", "0.5"] + db)
        #expect(unknown.status == 1 && unknown.stderr.contains("no user with id 'zed'"), "\(unknown.stderr)")
        #expect(unknown.stderr.split(separator: "\n").count == 1)
    }

    @Test("--demo --user watches the demo as that user")
    func demoAsAUser() throws {
        let outcome = try BuiltExecutable.run("chatfeed", ["watch", "--demo", "--user", "alice", "--duration", "1", "--limit", "30"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let last = try #require(outcome.stdout.components(separatedBy: "chatfeed watch — main: ").last)
        #expect(last.components(separatedBy: "Alice & ").count - 1 >= 5, "\(last)")
        #expect(!last.contains("Me & "))
    }

    @Test("watching an existing database shows its chats and the CLI's writes")
    func existingDatabase() throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("w.sqlite")
        #expect(try BuiltExecutable.run("chatfeed", ["init", "--database", database]).status == 0)
        #expect(try BuiltExecutable.run("chatfeed", ["chat", "create", "ops", "--title", "Ops room", "--database", database]).status == 0)
        let outcome = try BuiltExecutable.run("chatfeed", ["watch", "--database", database, "--duration", "0.5"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("Ops room"))
    }

    @Test("--demo with --database is a usage error")
    func usage() throws {
        let outcome = try BuiltExecutable.run("chatfeed", ["watch", "--demo", "--database", "x.sqlite"])
        #expect(outcome.status != 0 && outcome.stderr.contains("--demo"))
    }

    @Test("--resume saves the rows shown and catches up from them with batches")
    func resume() throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("r.sqlite")
        #expect(try BuiltExecutable.run("chatfeed", ["init", "--database", database]).status == 0)
        let rows = directory.path("rows.json")
        for (id, at) in [("a", "1000"), ("b", "2000"), ("c", "3000"), ("d", "4000"), ("e", "5000"), ("f", "6000")] {
            #expect(try BuiltExecutable.run("chatfeed", ["chat", "create", id, "--title", "Chat \(id)", "--at", at, "--database", database]).status == 0)
        }
        let first = try BuiltExecutable.run("chatfeed", ["watch", "--database", database, "--resume", rows, "--duration", "0.5", "--limit", "8"])
        #expect(first.status == 0, "\(first.stderr)")
        let saved = try String(contentsOfFile: rows, encoding: .utf8)
        #expect(saved.hasPrefix(#"[{"id":"f""#) && saved.contains(#""id":"a""#))

        #expect(try BuiltExecutable.run("chatfeed", ["send", "a", "--from", "ann", "back again", "--at", "9000", "--database", database]).status == 0)
        #expect(try BuiltExecutable.run("chatfeed", ["chat", "remove", "b", "--database", database]).status == 0)
        let second = try BuiltExecutable.run("chatfeed", ["watch", "--database", database, "--resume", rows, "--duration", "0.5", "--limit", "8"])
        #expect(second.status == 0, "\(second.stderr)")
        let frames = second.stdout.components(separatedBy: "chatfeed watch — ").dropFirst()
        #expect(frames.first?.contains("Chat b") == true, "the saved rows show first")
        let last = try #require(frames.last)
        #expect(last.contains("0 resets") && last.contains("2 batches"), "\(last)")
        #expect(last.contains("↑") && !last.contains("Chat b"))
        let resaved = try String(contentsOfFile: rows, encoding: .utf8)
        #expect(resaved.hasPrefix(#"[{"id":"a""#) && !resaved.contains(#""id":"b""#))
    }

    @Test("--resume resumes only the list it was saved from")
    func resumeKeepsItsList() throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("l.sqlite")
        #expect(try BuiltExecutable.run("chatfeed", ["init", "--database", database]).status == 0)
        let rows = directory.path("rows.json")
        for (id, at) in [("a", "1000"), ("b", "2000"), ("c", "3000")] {
            #expect(try BuiltExecutable.run("chatfeed", ["chat", "create", id, "--title", "Chat \(id)", "--at", at, "--database", database]).status == 0)
        }
        #expect(try BuiltExecutable.run("chatfeed", ["chat", "archive", "c", "--database", database]).status == 0)
        let archive = try BuiltExecutable.run("chatfeed", ["watch", "--database", database, "--list", "archive", "--resume", rows, "--duration", "0.5"])
        #expect(archive.status == 0, "\(archive.stderr)")
        #expect(try String(contentsOfFile: rows, encoding: .utf8).hasPrefix(#"[{"id":"c""#))

        let main = try BuiltExecutable.run("chatfeed", ["watch", "--database", database, "--resume", rows, "--duration", "0.5"])
        #expect(main.status == 0, "\(main.stderr)")
        let frames = main.stdout.components(separatedBy: "chatfeed watch — ").dropFirst()
        #expect(frames.allSatisfy { !$0.contains("Chat c") }, "the archive's saved row never shows in main")
        #expect(frames.last?.contains("Chat a") == true && frames.last?.contains("Chat b") == true)
        let resaved = try String(contentsOfFile: rows, encoding: .utf8)
        #expect(resaved.hasPrefix(#"[{"id":"b""#) && !resaved.contains(#""id":"c""#))
    }

    @Test("--resume with --demo is a usage error; a bad saved file is named")
    func resumeErrors() throws {
        let outcome = try BuiltExecutable.run("chatfeed", ["watch", "--demo", "--resume", "rows.json"])
        #expect(outcome.status != 0 && outcome.stderr.contains("--resume"))
        let directory = try TemporaryDirectory()
        let rows = directory.path("rows.json")
        try "{}".write(toFile: rows, atomically: true, encoding: .utf8)
        let bad = try BuiltExecutable.run("chatfeed", ["watch", "--database", directory.path("x.sqlite"), "--resume", rows, "--duration", "0.2"])
        #expect(bad.status != 0 && bad.stderr.contains(rows))
    }

    @Test("--database in a directory that does not exist, or a database that does not exist, is an error; nothing is created")
    func missingDatabase() throws {
        let directory = try TemporaryDirectory()
        let inMissingDirectory = try BuiltExecutable.run("chatfeed", ["watch", "--database", directory.path("gone/feed.sqlite"), "--duration", "0.2"])
        #expect(inMissingDirectory.status == 1 && inMissingDirectory.stderr.contains("no directory '\(directory.path("gone"))'"), "\(inMissingDirectory.stderr)")
        let missing = try BuiltExecutable.run("chatfeed", ["watch", "--database", directory.path("feed.sqlite"), "--duration", "0.2"])
        #expect(missing.status == 1 && missing.stderr.contains("no database at"), "\(missing.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }
}
