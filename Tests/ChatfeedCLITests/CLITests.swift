import ChatModel
import ChatStore
import Foundation
import Synchronization
import Testing
import TestSupport

/// Runs the built `chatfeed` executable.
enum CLI {
    static var executable: String { BuiltExecutable.path("chatfeed") }

    static func run(_ arguments: [String]) throws -> BuiltExecutable.Outcome {
        try BuiltExecutable.run("chatfeed", arguments)
    }
}

@Suite struct CLITests {
    @Test func theExecutableIsBuilt() {
        #expect(FileManager.default.isExecutableFile(atPath: CLI.executable), "missing \(CLI.executable)")
    }

    @Test func writesAndQueriesRoundTrip() throws {
        let directory = try TemporaryDirectory()
        let db = ["--database", directory.path("cli.sqlite")]
        #expect(try CLI.run(["init"] + db).status == 0)
        #expect(try CLI.run(["chat", "create", "general", "--title", "General", "--at", "1000"] + db).status == 0)
        #expect(try CLI.run(["chat", "create", "random", "--title", "Random \"quoted\"", "--at", "2000"] + db).status == 0)
        let sent = try CLI.run(["send", "general", "--from", "ann", "hello\nworld", "--id", "m1", "--at", "3000"] + db)
        #expect(sent.status == 0 && sent.stdout == "m1\n")
        let fresh = try CLI.run(["send", "random", "--from", "bob", "no id given"] + db)
        #expect(fresh.status == 0 && !fresh.stdout.isEmpty)

        let list = try CLI.run(["chats", "--json"] + db)
        #expect(list.status == 0 && list.stderr.isEmpty)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])
        #expect(object["total"] as? Int == 2)
        let items = try #require(object["items"] as? [[String: Any]])
        #expect(items.map { $0["id"] as? String } == ["random", "general"])
        let general = items[1]
        #expect(general["title"] as? String == "General" && general["createdAt"] as? Int == 1000)
        #expect(general["lastMessageDate"] as? Int == 3000 && general["unread"] as? Int == 1)
        let last = try #require(general["lastMessage"] as? [String: Any])
        #expect(last["id"] as? String == "m1" && last["text"] as? String == "hello\nworld" && last["sentAt"] as? Int == 3000)
        #expect((items[0]["title"] as? String) == "Random \"quoted\"")

        let table = try CLI.run(["chats"] + db)
        #expect(table.status == 0 && table.stdout.contains("general") && table.stdout.contains("ago"))
        let located = try CLI.run(["locate", "--json", "general", "nope"] + db)
        #expect(located.stdout == "{\"total\":2,\"indices\":{\"general\":1,\"nope\":null}}\n")
        let messages = try CLI.run(["messages", "general", "--json"] + db)
        #expect(messages.stdout == "{\"items\":[{\"id\":\"m1\",\"chat\":\"general\",\"sender\":\"ann\",\"text\":\"hello\\nworld\",\"sentAt\":3000,\"editedAt\":null}],\"nextCursor\":null}\n")

        let store = try ChatDatabase(path: directory.path("cli.sqlite"))
        #expect(try store.stats().messages == 2)
    }

    /// `messages` ends with the cursor of the next page; `--cursor` shows that page.
    @Test func messagesPageByCursor() throws {
        let directory = try TemporaryDirectory()
        let db = ["--database", directory.path("cli.sqlite")]
        let store = try ChatDatabase(path: directory.path("cli.sqlite"))
        _ = try store.apply([.createChat(id: "g", title: "G", createdAt: 0)] + (0..<5).map {
            .postMessage(Message(id: "m\($0)", chat: "g", sender: "ann", text: "t\($0)", sentAt: 100))
        })
        var seen: [String] = []
        var arguments = ["messages", "g", "--limit", "2"] + db
        for _ in 0..<5 {
            let page = try CLI.run(arguments)
            #expect(page.status == 0 && page.stderr.isEmpty)
            let lines = page.stdout.split(separator: "\n")
            seen += lines.dropFirst().compactMap { line in line.split(separator: " ").last.map(String.init) }
                .filter { $0.hasPrefix("m") }
            guard let more = lines.last, more.hasPrefix("more: --cursor ") else { break }
            arguments = ["messages", "g", "--limit", "2", "--cursor", String(more.dropFirst("more: --cursor ".count))] + db
        }
        #expect(seen == ["m4", "m3", "m2", "m1", "m0"])
        let bad = try CLI.run(["messages", "g", "--cursor", "nope"] + db)
        #expect(bad.status == 1 && bad.stderr.contains("cursor") && bad.stdout.isEmpty)
    }

    @Test func aRefusedWriteIsOneErrorLineAndChangesNothing() throws {
        let directory = try TemporaryDirectory()
        let db = ["--database", directory.path("cli.sqlite")]
        #expect(try CLI.run(["init"] + db).status == 0)
        #expect(try CLI.run(["chat", "create", "a", "--title", "A", "--at", "0"] + db).status == 0)
        #expect(try CLI.run(["send", "a", "--from", "ann", "hi", "--id", "m1", "--at", "5"] + db).status == 0)
        let before = try CLI.run(["chats", "--json"] + db).stdout

        let conflict = try CLI.run(["send", "a", "--from", "ann", "changed", "--id", "m1", "--at", "5"] + db)
        #expect(conflict.status == 1 && conflict.stdout.isEmpty)
        #expect(conflict.stderr == "chatfeed: error: message 'm1' already exists with another text\n")
        let missing = try CLI.run(["chat", "rename", "zzz", "--title", "x"] + db)
        #expect(missing.status == 1 && missing.stderr == "chatfeed: error: no chat with id 'zzz'\n")
        let noDatabase = try CLI.run(["stats", "--database", directory.path("absent.sqlite")])
        #expect(noDatabase.status == 1 && noDatabase.stderr.hasPrefix("chatfeed: error: no database at"))
        #expect(!FileManager.default.fileExists(atPath: directory.path("absent.sqlite")))
        let usage = try CLI.run(["send", "a"] + db)
        #expect(usage.status != 0 && usage.status != 1)

        #expect(try CLI.run(["chats", "--json"] + db).stdout == before)
    }

    @Test func theConfigFileChoosesTheDatabaseAndABadKeyIsOneClearError() throws {
        let directory = try TemporaryDirectory()
        let config = directory.path("chatfeed.json")
        try Data(#"{"database": "\#(directory.path("from-config.sqlite"))", "busyTimeoutMilliseconds": 100}"#.utf8)
            .write(to: URL(fileURLWithPath: config))
        #expect(try CLI.run(["init", "--config", config]).status == 0)
        #expect(FileManager.default.fileExists(atPath: directory.path("from-config.sqlite")))
        // The flag wins over the file.
        #expect(try CLI.run(["init", "--config", config, "--database", directory.path("flag.sqlite")]).status == 0)
        #expect(FileManager.default.fileExists(atPath: directory.path("flag.sqlite")))

        let bad = directory.path("bad.json")
        try Data(#"{"busyTimeoutMilliseconds": "soon"}"#.utf8).write(to: URL(fileURLWithPath: bad))
        let refused = try CLI.run(["stats", "--config", bad, "--database", directory.path("flag.sqlite")])
        #expect(refused.status == 1 && refused.stdout.isEmpty)
        #expect(refused.stderr.hasPrefix("chatfeed: error: ") && refused.stderr.contains("busyTimeoutMilliseconds"))
        #expect(refused.stderr.split(separator: "\n").count == 1)
    }

    /// CLI processes and an in-process store write to one file at once: nothing fails or is lost.
    @Test func processesWritingAtOnceLoseNothing() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let store = try ChatDatabase(path: path)
        try store.apply(.createChat(id: "shared", title: "Shared", createdAt: 0))
        let failures = Mutex<[String]>([])
        let processes = 6
        let perProcess = 5
        onThreads(processes + 1) { index in
            if index == processes {
                do {
                    let own = try ChatDatabase(path: path)
                    for i in 0..<200 { try own.apply(.postMessage(Message(id: "local-\(i)", chat: "shared", sender: "ann", text: "hi", sentAt: Int64(i)))) }
                } catch {
                    failures.withLock { $0.append("in-process writer: \(error)") }
                }
                return
            }
            for i in 0..<perProcess {
                do {
                    let result = try CLI.run(["send", "shared", "--from", "p\(index)", "text", "--id", "p\(index)-\(i)", "--database", path])
                    if result.status != 0 { failures.withLock { $0.append("process \(index): \(result.stderr)") } }
                } catch {
                    failures.withLock { $0.append("process \(index): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(try store.chat(id: "shared")?.unread == Int64(200 + processes * perProcess))
        #expect(try store.stats().messages == 200 + processes * perProcess)
    }
}
