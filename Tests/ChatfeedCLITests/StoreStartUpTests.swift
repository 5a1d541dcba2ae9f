import ChatStore
import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// How `chatfeedd` and `chatfeed` start on a database they cannot use as asked (issue 22): one
/// line on stderr that names the cause, exit 1, never raw SQL; and read-only media served read-only.
@Suite struct StoreStartUpTests {
    static func makeStore(_ path: String, chats: Int = 3) throws {
        let store = try ChatDatabase(path: path)
        for index in 0..<chats { try store.apply(.createChat(id: "c\(index)", title: "C", createdAt: Int64(index))) }
        try store.checkpoint(truncate: true)
    }

    static func expectOneLineRefusal(
        _ outcome: BuiltExecutable.Outcome, containing words: [String], notContaining absent: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(outcome.status == .exited(1), "\(outcome.status): \(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.split(separator: "\n").count == 1, "stderr: \(outcome.stderr)", sourceLocation: sourceLocation)
        for word in words {
            #expect(outcome.stderr.contains(word), "'\(word)' missing from: \(outcome.stderr)", sourceLocation: sourceLocation)
        }
        for word in absent + ["PRAGMA", "SELECT", "INSERT", "BEGIN", " in `"] {
            #expect(!outcome.stderr.contains(word), "'\(word)' in: \(outcome.stderr)", sourceLocation: sourceLocation)
        }
        #expect(outcome.stdout.isEmpty, sourceLocation: sourceLocation)
    }

    static let listLine = #"{"jsonrpc":"2.0","id":1,"method":"chats.list"}"# + "\n"
    static let writeLine = #"{"jsonrpc":"2.0","id":2,"method":"chat.create","params":{"chat":"x","title":"X"}}"# + "\n"

    @Test(arguments: ["", ":memory:", "file:chat.sqlite", "file:chat.sqlite?mode=ro"])
    func pathsThatAreNoSharedFileGetTheirOwnMessage(path: String) throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("config.json", "{}")
        for (program, arguments) in [("chatfeedd", ["--database", path, "--config", config]), ("chatfeed", ["chats", "--database", path, "--config", config])] {
            let outcome = try BuiltExecutable.run(program, arguments)
            Self.expectOneLineRefusal(outcome, containing: ["cannot use '\(path)' as the database"], notContaining: ["read-only"])
        }
    }

    @Test func aDamagedDatabaseIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("damaged.sqlite")
        try Self.makeStore(path, chats: 3_000)
        try scribbleOverPage(6, ofFile: path)
        for arguments in [["chats"], ["stats"], ["chats", "--read-only"], ["send", "c1", "--from", "ann", "hi"]] {
            Self.expectOneLineRefusal(try BuiltExecutable.run("chatfeed", arguments + ["--database", path]), containing: ["is damaged", path])
        }
        // The daemon loads the lists while the check runs (docs/DECISIONS.md, "The quick check
        // beside the start"): its log comes first, then the refusal, and nothing is written.
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let daemon = try BuiltExecutable.run("chatfeedd", ["--database", path])
        #expect(daemon.status == .exited(1), "\(daemon.status): \(daemon.stderr)")
        let refusal = daemon.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(refusal.hasPrefix("chatfeedd: error: "), "\(daemon.stderr)")
        for word in ["is damaged", "quick_check", path] { #expect(refusal.contains(word), "\(refusal)") }
        for word in ["PRAGMA", "SELECT", "INSERT", "BEGIN", " in `"] { #expect(!refusal.contains(word), "\(refusal)") }
        #expect(daemon.stdout.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    /// The daemon's clean stop leaves a record of the file it checked (`CleanStopRecord`), and a
    /// command on the unchanged file skips its quick check: shown with damage the record vouches
    /// for (damage at rest that left the file's times alone), which the check would refuse.
    @Test func aCleanStopOfTheDaemonSparesTheNextCommandItsCheck() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("chats.sqlite")
        let config = try directory.write("config.json", "{}")
        try Self.makeStore(path, chats: 3_000)
        let daemon = try BuiltExecutable.run("chatfeedd", ["--database", path, "--config", config], stdin: Self.writeLine)
        #expect(daemon.status == .exited(0), "\(daemon.stderr)")
        #expect(CleanStopRecord.matches(databaseAt: path), "the daemon's clean stop records the file")
        let stats = try BuiltExecutable.run("chatfeed", ["stats", "--database", path, "--config", config])
        #expect(stats.status == .exited(0), "\(stats.stderr)")
        #expect(CleanStopRecord.matches(databaseAt: path), "a command leaves the record")

        try scribbleOverPage(6, ofFile: path)
        #expect(CleanStopRecord.write(forDatabaseAt: path))
        let trusted = try BuiltExecutable.run("chatfeed", ["stats", "--database", path, "--config", config])
        #expect(trusted.status == .exited(0), "the record is trusted: \(trusted.stderr)")
        let strict = try directory.write("strict.json", #"{"skipQuickCheckAfterCleanStop": false}"#)
        Self.expectOneLineRefusal(
            try BuiltExecutable.run("chatfeed", ["stats", "--database", path, "--config", strict]), containing: ["is damaged", path])
    }

    @Test(.enabled(if: SmallFileSystem.canMount, "mounts a tmpfs, which needs root (CI runs as root)"))
    func aFullDiskSaysSoAtStart() throws {
        let disk = try SmallFileSystem(sizeMiB: 1)
        disk.fill()
        let path = disk.path("new.sqlite")
        Self.expectOneLineRefusal(
            try BuiltExecutable.run("chatfeedd", ["--database", path]), containing: ["is full", path], notContaining: ["disk I/O error"])
        Self.expectOneLineRefusal(
            try BuiltExecutable.run("chatfeed", ["init", "--database", path]), containing: ["is full", path], notContaining: ["disk I/O error"])
    }

    /// An existing database on a full disk (no room for its -shm file) starts and serves reads;
    /// writes are storage full.
    @Test(.enabled(if: SmallFileSystem.canMount, "mounts a tmpfs, which needs root (CI runs as root)"))
    func anExistingDatabaseOnAFullDiskServesReads() throws {
        let disk = try SmallFileSystem(sizeMiB: 2)
        let path = disk.path("chatfeed.sqlite")
        try Self.makeStore(path)
        #expect(disk.size("chatfeed.sqlite-shm") == 0)
        disk.fill()
        let served = try BuiltExecutable.run("chatfeedd", ["--database", path], stdin: Self.listLine + Self.writeLine)
        #expect(served.status == .exited(0), "\(served.stderr)")
        let lines = served.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].contains(#""total":3"#) && lines[1].contains("-32004"), "\(served.stdout)")
        let chats = try BuiltExecutable.run("chatfeed", ["chats", "--json", "--database", path])
        #expect(chats.status == .exited(0) && chats.stdout.contains(#""total":3"#), "\(chats.stdout) \(chats.stderr)")
    }

    @Test(.enabled(if: SmallFileSystem.canMount, "mounts a tmpfs, which needs root (CI runs as root)"))
    func readOnlyMediaAreServedReadOnly() throws {
        let disk = try SmallFileSystem(sizeMiB: 4)
        let path = disk.path("chatfeed.sqlite")
        try Self.makeStore(path)
        #expect(disk.size("chatfeed.sqlite-wal") == 0 && disk.size("chatfeed.sqlite-shm") == 0)
        try disk.makeReadOnly()

        let served = try BuiltExecutable.run("chatfeedd", ["--database", path, "--read-only"], stdin: Self.listLine + Self.writeLine)
        #expect(served.status == .exited(0), "\(served.stderr)")
        let lines = served.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].contains(#""total":3"#) && lines[1].contains("-32006"), "\(served.stdout)")
        let chats = try BuiltExecutable.run("chatfeed", ["chats", "--json", "--read-only", "--database", path])
        #expect(chats.status == .exited(0) && chats.stdout.contains(#""total":3"#), "\(chats.status) \(chats.stdout) \(chats.stderr)")
        let stats = try BuiltExecutable.run("chatfeed", ["stats", "--read-only", "--database", path])
        #expect(stats.status == .exited(0), "\(stats.stderr)")
        // Without the flag, both say what to do.
        Self.expectOneLineRefusal(try BuiltExecutable.run("chatfeedd", ["--database", path]), containing: ["not writable", "--read-only"])
        Self.expectOneLineRefusal(try BuiltExecutable.run("chatfeed", ["chats", "--database", path]), containing: ["not writable", "--read-only"])
    }
}
