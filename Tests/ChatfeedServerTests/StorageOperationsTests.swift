import ChatModel
import ChatStore
import JSONCodec
import Foundation
import TestSupport
import Testing
import WireProtocol

#if canImport(Glibc)
import Glibc
#endif

/// The daemon under an operator's faults: a pruned change log while it was stopped, a full
/// disk, a graceful exit that leaves the main file whole, a start on a file it cannot use.
@Suite struct StorageOperationsTests {
    static func writeConfig(_ directory: TemporaryDirectory, _ json: String) throws -> String {
        let path = directory.path("test-config.json")
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func post(_ daemon: Daemon, chat: String, id: String, at sentAt: Int64, text: String = "hi") -> JSONValue {
        daemon.post("message.post", [
            "chat": .string(chat), "id": .string(id), "sender": "ann", "text": .string(text), "sentAt": .integer(sentAt),
        ])
    }

    static func list(_ daemon: Daemon) throws -> [Chat] {
        try (daemon.call("chats.list", ["limit": 10_000])["items"]?.arrayValue ?? []).map { try Chat(jsonValue: $0) }
    }

    @Test func aDaemonStoppedWhileTheLogIsPrunedResumesWithResets() throws {
        let directory = try TemporaryDirectory()
        let config = try Self.writeConfig(directory, #"{"changeLogRetention": 10, "changeLogReaderTimeoutMilliseconds": 300}"#)
        let stopped = try Daemon(directory: directory, extraArguments: ["--config", config])
        for index in 0..<6 {
            try stopped.call("chat.create", ["chat": .string("c\(index)"), "title": "C", "createdAt": .integer(Int64(index))])
        }
        let full = try FeedMirror(daemon: stopped, maxInFlight: 1)
        let window = try FeedMirror(daemon: stopped, limit: 3, maxInFlight: 0)
        let seen = try FeedMirror.settle([full, window], daemon: stopped)["latestChangeSequence"]?.int64Value ?? -1

        stopped.signal(SIGSTOP)
        defer { stopped.signal(SIGCONT) }
        usleep(500_000)  // past the reader timeout: the stopped daemon no longer holds pruning back
        let writer = try Daemon(directory: directory, extraArguments: ["--config", config])
        var random = SeededGenerator(seed: 11)
        var ids: [JSONValue] = []
        for index in 0..<80 {
            ids.append(Self.post(writer, chat: "c\(Int.random(in: 0..<6, using: &random))", id: "m\(index)", at: Int64(100 + Int.random(in: 0..<50, using: &random))))
        }
        ids.append(writer.post("chat.create", ["chat": "new", "title": "N", "createdAt": 1_000]))
        ids.append(writer.post("chat.remove", ["chat": "c5"]))
        for id in ids { #expect(try writer.reply(to: id).failure == nil) }
        // Pruning runs in chunks inside write transactions, and a group commit may hold all the
        // writes above: write one at a time until a transaction prunes past the stopped daemon.
        var bounds = try ChatDatabase(path: stopped.databasePath, options: StoreOptions(readOnly: true)).changeLogBounds()
        for extra in 0..<200 where bounds.prunedThrough <= seen {
            #expect(try writer.reply(to: Self.post(writer, chat: "c0", id: "x\(extra)", at: 50)).failure == nil)
            bounds = try ChatDatabase(path: stopped.databasePath, options: StoreOptions(readOnly: true)).changeLogBounds()
        }
        #expect(bounds.prunedThrough > seen, "the log was not pruned past the stopped daemon's position \(seen): \(bounds)")

        stopped.signal(SIGCONT)
        let expected = try Self.list(writer)
        let deadline = Date(timeIntervalSinceNow: 30)
        while try Self.list(stopped).map(\.id) != expected.map(\.id) {
            guard Date() < deadline else { throw HarnessError("the resumed daemon never caught up") }
            usleep(10_000)
        }
        _ = try FeedMirror.settle([full, window], daemon: stopped)
        #expect(full.resets >= 1 && window.resets >= 1, "full: \(full.resets) resets, window: \(window.resets)")
        #expect(full.rows == expected)
        #expect(window.rows == Array(expected.prefix(3)))
        #expect(try Self.list(stopped) == expected)
        #expect(stopped.stderr.contains("pruned"))
        // Afterwards it follows the log again with batches.
        let resetsBefore = full.resets
        #expect(try writer.reply(to: Self.post(writer, chat: "c0", id: "after", at: 10_000)).failure == nil)
        let again = Date(timeIntervalSinceNow: 30)
        while full.rows.first?.id != "c0" {
            guard Date() < again else { throw HarnessError("the write after the reset never arrived") }
            _ = try FeedMirror.settle([full, window], daemon: stopped)
            usleep(10_000)
        }
        #expect(full.resets == resetsBefore)
        #expect(try stopped.shutDown() == .exited(0))
        #expect(try writer.shutDown() == .exited(0))
        #expect(stopped.malformed.isEmpty)
    }

    /// What a backup copy of the `.sqlite` file alone holds.
    static func copyOfMainFile(_ path: String) throws -> (store: ChatDatabase, directory: TemporaryDirectory) {
        let copy = try TemporaryDirectory()
        try FileManager.default.copyItem(atPath: path, toPath: copy.path("copy.sqlite"))
        return (try ChatDatabase(path: copy.path("copy.sqlite"), options: StoreOptions(readOnly: true)), copy)
    }

    @Test(arguments: [0, SIGTERM])
    func aGracefulExitLeavesEveryAcknowledgedWriteInTheMainFile(signal: Int32) throws {
        let daemon = try Daemon()
        let sent = ShutdownTests.sendBurst(daemon, prefix: "c", count: 3_000)
        if signal == 0 {
            for write in sent { _ = try daemon.reply(to: write.post) }
            daemon.closeStdin()
        } else {
            try daemon.waitForResponses(atLeast: 200)
            daemon.signal(signal)
        }
        #expect(try daemon.waitForExit() == .exited(0))
        try daemon.waitForEndOfOutput()
        let acknowledged = sent.filter { (try? daemon.reply(to: $0.post, timeout: 0.1))?.result == ["duplicate": false] }
        if signal == 0 { #expect(acknowledged.count == sent.count) }
        #expect(!acknowledged.isEmpty)
        let wal = (try? FileManager.default.attributesOfItem(atPath: daemon.databasePath + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0, "the -wal file holds \(wal) bytes after exit 0")
        let (copy, _) = try Self.copyOfMainFile(daemon.databasePath)
        let ids = Set(try copy.allChats().chats.filter { $0.lastMessage != nil }.map(\.id))
        for write in acknowledged where !ids.contains(write.chat) {
            Issue.record("the acknowledged post to \(write.chat) is not in the main file")
            break
        }
        #expect(try copy.stats().messages >= acknowledged.count)
    }

    @Test func aFullDiskIsItsOwnErrorAndFreeingSpaceBringsWritesBack() throws {
        let directory = try TemporaryDirectory()
        let config = try Self.writeConfig(directory, #"{"maxDatabaseMiB": 1}"#)
        let daemon = try Daemon(directory: directory, extraArguments: ["--config", config])
        try daemon.call("chat.create", ["chat": "big", "title": "B", "createdAt": 0])
        try daemon.call("chat.create", ["chat": "other", "title": "O", "createdAt": 0])
        let mirror = try FeedMirror(daemon: daemon, maxInFlight: 0)
        let text = String(repeating: "x", count: 4000)
        var full: RPCFailure?
        var posted = 0
        while full == nil && posted < 2_000 {
            let ids = (0..<50).map { Self.post(daemon, chat: "big", id: "b\(posted + $0)", at: Int64(posted + $0), text: text) }
            for id in ids {
                switch try daemon.reply(to: id) {
                case .result: posted += 1
                case .error(let failure): full = full ?? failure
                }
            }
        }
        guard let full else { Issue.record("no error after \(posted) posts"); return }
        #expect(full.code == -32004, "\(full)")
        #expect(full.message.hasPrefix("storage full"), "\(full.message)")
        // The daemon is still there; what failed is not in the store.
        let stats = try daemon.call("server.stats")
        #expect(stats["messages"]?.int64Value == Int64(posted))
        // Freeing space (removing the big chat) brings writes back, a thousand at a time too.
        try daemon.call("chat.remove", ["chat": "big"])
        let ids = (0..<1_000).map { Self.post(daemon, chat: "other", id: "o\($0)", at: Int64($0), text: "short") }
        for id in ids { #expect(try daemon.reply(to: id).failure == nil) }
        _ = try FeedMirror.settle([mirror], daemon: daemon)
        #expect(mirror.rows.map(\.id) == ["other"] && mirror.rows.first?.unread == 1_000)
        #expect(try daemon.shutDown() == .exited(0))
    }

    // MARK: Fail fast at start

    /// Runs `chatfeedd` (or `program`) to its exit with `stdin`, then stdin closed, as an
    /// unprivileged user when the tests run as root (root may write any file).
    static func startDaemon(_ arguments: [String], program: String = "chatfeedd", stdin: String? = nil) throws -> BuiltExecutable.Outcome {
        if geteuid() == 0 {
            return try BuiltExecutable.run(
                executable: "/usr/bin/setpriv",
                ["--reuid=65534", "--regid=65534", "--clear-groups", BuiltExecutable.path(program)] + arguments, stdin: stdin)
        }
        return try BuiltExecutable.run(program, arguments, stdin: stdin)
    }

    static func makeStore(_ path: String, chats: Int = 3) throws {
        let store = try ChatDatabase(path: path)
        for index in 0..<chats { try store.apply(.createChat(id: "c\(index)", title: "C", createdAt: Int64(index))) }
        try store.checkpoint(truncate: true)
    }

    static func expectOneLineRefusal(_ outcome: BuiltExecutable.Outcome, containing words: [String]) {
        #expect(outcome.status == .exited(1), "\(outcome.status): \(outcome.stderr)")
        let lines = outcome.stderr.split(separator: "\n")
        #expect(lines.count == 1, "stderr: \(outcome.stderr)")
        for word in words { #expect(outcome.stderr.contains(word), "stderr: \(outcome.stderr)") }
        #expect(outcome.stdout.isEmpty)
    }

    @Test func aReadOnlyFileIsRefusedAtStartUnlessAskedForReadOnly() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("ro.sqlite")
        try Self.makeStore(path)
        chmod(directory.url.path, 0o777)
        chmod(path, 0o444)
        for suffix in ["-wal", "-shm"] { chmod(path + suffix, 0o666) }
        Self.expectOneLineRefusal(
            try Self.startDaemon(["--database", path]), containing: ["not writable", "read-only", path])
    }

    @Test func aReadOnlyDirectoryIsRefusedAtStart() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.path("locked")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let path = folder + "/db.sqlite"
        try Self.makeStore(path)
        chmod(directory.url.path, 0o755)
        chmod(path, 0o666)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        chmod(folder, 0o555)
        defer { chmod(folder, 0o755) }
        Self.expectOneLineRefusal(
            try Self.startDaemon(["--database", path]), containing: ["not writable", folder])
        // With --read-only it is served (issue 22: SQLite errors 1544 and 14 before), and the
        // CLI's readers take the flag too.
        let served = try Self.startDaemon(["--database", path, "--read-only"], stdin: #"{"jsonrpc":"2.0","id":1,"method":"chats.list"}"# + "\n")
        #expect(served.status == .exited(0) && served.stdout.contains(#""total":3"#), "\(served.stdout) \(served.stderr)")
        let chats = try Self.startDaemon(["chats", "--json", "--read-only", "--database", path], program: "chatfeed")
        #expect(chats.status == .exited(0) && chats.stdout.contains(#""total":3"#), "\(chats.stdout) \(chats.stderr)")
    }

    @Test func readOnlyOnRequestServesReadsAndRefusesWrites() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("ro.sqlite")
        try Self.makeStore(path)
        let daemon = try Daemon(directory: directory, database: "ro.sqlite", extraArguments: ["--read-only"])
        #expect(try daemon.call("chats.list")["total"] == 3)
        let mirror = try FeedMirror(daemon: daemon, maxInFlight: 1)
        #expect(mirror.rows.count == 3)
        let refused = try daemon.request("chat.create", ["chat": "x", "title": "X"]).failure
        #expect(refused?.code == -32006 && refused?.message.contains("--read-only") == true, "\(String(describing: refused))")
        #expect(try daemon.shutDown() == .exited(0))
        #expect(try ChatDatabase(path: path, options: StoreOptions(readOnly: true)).chatCount() == 3)
    }
}
