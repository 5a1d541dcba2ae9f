import ChatfeedEngine
import ChatStore
import Foundation
import JSONCodec
import SQLite
import Testing
import TestSupport

/// The start-up's quick check runs beside the engine (docs/DECISIONS.md, "The quick check beside
/// the start"): reads are answered while it runs, nothing is written before it has passed, and a
/// file it finds damaged gets no write at all — its reads are served, its writes refused.
@Suite struct StartUpCheckTests {
    /// A database of 3,000 chats with one page overwritten, the root of the index of message
    /// ids (empty), which no read of a list needs. Its lists still load, and `PRAGMA
    /// quick_check` finds the page.
    private static func damagedStore(in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("damaged.sqlite")
        let store = try ChatDatabase(path: path)
        for result in try store.apply((0..<3000).map { .createChat(id: "c\($0)", title: "C", createdAt: Int64($0)) }) {
            _ = try result.get()
        }
        #expect(try store.checkpoint(truncate: true))
        try scribbleOverTheMessageIDIndex(path)
        return path
    }

    private static func scribbleOverTheMessageIDIndex(_ path: String) throws {
        let root = try #require(try Database(path: path).makeStatement("SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_message_1'")
            .fetchValue(Int.self))
        try scribbleOverPage(root - 1, ofFile: path)
    }

    @Test func aDamagedFileIsReadButNotWritten() async throws {
        let directory = try TemporaryDirectory()
        let path = try Self.damagedStore(in: directory)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let engine = try ChatEngine(options: EngineOptions(databasePath: path))
        let client = SessionClient(engine.openInProcessSession())

        // Whether the check has finished or not: the read is answered, the write refused.
        for _ in 0..<2 {
            let page = try await client.result("chats.list", ["limit": 2])
            #expect(page["total"] == .integer(3000))
            let write = try await client.call("chat.create", ["chat": "new", "title": "New"])
            #expect(write["error"]?["code"] == .integer(-32006), "\(write)")
            let message = write["error"]?["message"]?.stringValue ?? ""
            #expect(message.contains("is damaged") && message.contains("quick_check") && message.contains(path), "\(message)")
        }
        let subscription = try await client.result("feed.subscribe", ["limit": 5])
        #expect(subscription["items"]?.arrayValue?.count == 5)

        engine.stop()
        engine.waitUntilStopped()
        guard case .damaged(let damagedPath, _) = engine.lostDatabase else {
            Issue.record("lostDatabase: \(String(describing: engine.lostDatabase))")
            return
        }
        #expect(damagedPath == path)
        // Nothing was written: not the write, not the reader's row, not a checkpoint.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0)
    }

    /// A clean stop of an engine whose file passed its check leaves a record of the file
    /// (`CleanStopRecord`); a start takes it away, and a file as it describes is not checked
    /// (docs/DECISIONS.md, "The quick check after a clean stop").
    @Test func aCleanStopLeavesARecordThatTheNextStartTakes() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("clean.sqlite")
        let record = CleanStopRecord.path(for: path)
        for round in 0..<3 {
            let engine = try ChatEngine(options: EngineOptions(databasePath: path))
            // Taken away at start, so that a crash leaves none.
            #expect(!FileManager.default.fileExists(atPath: record), "round \(round)")
            let client = SessionClient(engine.openInProcessSession())
            _ = try await client.result("chat.create", ["chat": .string("c\(round)"), "title": "C"])
            let page = try await client.result("chats.list", ["limit": 10])
            #expect(page["total"] == .integer(Int64(round + 1)))
            engine.stop()
            engine.waitUntilStopped()
            #expect(engine.lostDatabase == nil)
            #expect(CleanStopRecord.matches(databaseAt: path), "round \(round)")
        }
    }

    /// What the record trusts, shown with a damaged file it vouches for (damage at rest that
    /// left the file's times alone): the start skips the check and takes writes, and its clean
    /// stop vouches for the file again. A change to the file after the record, or
    /// `skipQuickCheckAfterCleanStop: false`, brings the check back.
    @Test func aFileAsItsRecordSaysIsNotCheckedAndAChangeBringsTheCheckBack() async throws {
        let directory = try TemporaryDirectory()
        let path = try Self.damagedStore(in: directory)
        let record = CleanStopRecord.path(for: path)

        func firstWrite(_ chat: String, skipping: Bool = true) async throws -> JSONValue {
            let engine = try ChatEngine(options: EngineOptions(databasePath: path, skipQuickCheckAfterCleanStop: skipping))
            defer { engine.stop(); engine.waitUntilStopped() }
            let client = SessionClient(engine.openInProcessSession())
            return try await client.call("chat.create", ["chat": .string(chat), "title": "New"])
        }

        #expect(CleanStopRecord.write(forDatabaseAt: path))
        #expect(try await firstWrite("n1", skipping: false)["error"]?["code"] == .integer(-32006))
        #expect(!FileManager.default.fileExists(atPath: record), "taken away at start, not written at a damaged stop")

        #expect(CleanStopRecord.write(forDatabaseAt: path))
        #expect(try await firstWrite("n2")["error"] == nil, "the record was trusted")
        #expect(CleanStopRecord.matches(databaseAt: path), "and written again at the stop")

        // A change to the file after the record (here its times) brings the check back.
        try Self.scribbleOverTheMessageIDIndex(path)
        #expect(try await firstWrite("n3")["error"]?["code"] == .integer(-32006))
        #expect(!FileManager.default.fileExists(atPath: record))
    }

    @Test func withoutTheCheckTheSameFileTakesWrites() async throws {
        let directory = try TemporaryDirectory()
        let path = try Self.damagedStore(in: directory)
        let engine = try ChatEngine(options: EngineOptions(databasePath: path, quickCheckAtStart: false))
        defer { engine.stop(); engine.waitUntilStopped() }
        let client = SessionClient(engine.openInProcessSession())
        _ = try await client.result("chat.create", ["chat": "new", "title": "New"])
        #expect(engine.lostDatabase == nil)
    }
}
