import Benchmark
import CSQLite
import ChatModel
import ChatStore
import Foundation
import SQLite

// Store ingest beside raw libsqlite3 inserts of the same rows, and the whole-list load of
// 1,000,000 chats. Each ingest iteration posts 1,000 messages (scaling factor kilo), so
// "throughput" reads as thousands of posts per second.

let benchmarks: @Sendable () -> Void = {
    let ingest = Benchmark.Configuration(
        metrics: [.wallClock, .throughput], warmupIterations: 2, scalingFactor: .kilo,
        maxDuration: .seconds(4), maxIterations: 200)

    for groupSize in [1, 100, 1000] {
        Benchmark("Store ingest, group commit of \(groupSize)", configuration: ingest.with(
            setup: { Fixtures.ingest = try IngestFixture(name: "store-\(groupSize)", cacheSizeKiB: nil) },
            teardown: { Fixtures.ingest = nil }
        )) { benchmark in
            try Fixtures.ingest!.postThroughStore(count: benchmark.scaledIterations.count, groupSize: groupSize)
        }
        Benchmark("Raw sqlite3 inserts, group commit of \(groupSize)", configuration: ingest.with(
            setup: { Fixtures.ingest = try IngestFixture(name: "raw-\(groupSize)", cacheSizeKiB: nil) },
            teardown: { Fixtures.ingest = nil }
        )) { benchmark in
            try Fixtures.ingest!.insertRaw(count: benchmark.scaledIterations.count, groupSize: groupSize)
        }
    }
    for (label, cache) in [("64 MiB cache", 65_536)] {
        Benchmark("Store ingest, group commit of 1000, \(label)", configuration: ingest.with(
            setup: { Fixtures.ingest = try IngestFixture(name: "store-big", cacheSizeKiB: cache) },
            teardown: { Fixtures.ingest = nil }
        )) { benchmark in
            try Fixtures.ingest!.postThroughStore(count: benchmark.scaledIterations.count, groupSize: 1000)
        }
        Benchmark("Raw sqlite3 inserts, group commit of 1000, \(label)", configuration: ingest.with(
            setup: { Fixtures.ingest = try IngestFixture(name: "raw-big", cacheSizeKiB: cache) },
            teardown: { Fixtures.ingest = nil }
        )) { benchmark in
            try Fixtures.ingest!.insertRaw(count: benchmark.scaledIterations.count, groupSize: 1000)
        }
    }

    let load = Benchmark.Configuration(
        metrics: [.wallClock, .peakMemoryResident], warmupIterations: 1, maxDuration: .seconds(20),
        maxIterations: 5,
        setup: { Fixtures.bigList = try BigListFixture(chats: 1_000_000) },
        teardown: { Fixtures.bigList = nil })
    Benchmark("allChats() of 1,000,000 chats", configuration: load) { benchmark in
        let (chats, _) = try Fixtures.bigList!.store.allChats()
        precondition(chats.count == 1_000_000)
        blackHole(chats)
    }
    Benchmark("Raw sqlite3 step over the memberships and their chats of 1,000,000 chats, unordered", configuration: load) {
        benchmark in
        blackHole(try Fixtures.bigList!.stepRaw())
    }
    // The daemon's start: the lists without their content (one scan of the memberships, then
    // `inListOrder`'s sort), beside raw libsqlite3 stepping the same query and reading the same
    // columns, without the sort (the store keeps no index in list order since schema 11).
    Benchmark("allChats(withContent: false) of 1,000,000 chats", configuration: load) { benchmark in
        let (chats, _) = try Fixtures.bigList!.store.allChats(withContent: false)
        precondition(chats.count == 1_000_000)
        blackHole(chats)
    }
    Benchmark("Raw sqlite3 step over the memberships of 1,000,000 chats, each column read", configuration: load) {
        benchmark in
        blackHole(try Fixtures.bigList!.stepMembershipsRaw())
    }

    // A user's list among other users' (issue 19): the first subscribe's load and a page deep
    // in the list (`chats.list` with an offset).
    let userLists = Benchmark.Configuration(
        metrics: [.wallClock], warmupIterations: 2, maxDuration: .seconds(4), maxIterations: 200,
        setup: { Fixtures.userLists = try UserListsFixture() },
        teardown: { Fixtures.userLists = nil })
    Benchmark("allChats(of:) of a user with 10,000 of 100,000 chats", configuration: userLists) { benchmark in
        let (chats, _) = try Fixtures.userLists!.store.allChats(of: "user-3")
        precondition(chats.count == 10_000)
        blackHole(chats)
    }
    Benchmark("A page of 50 at offset 5,000 of a user's 10,000 chats", configuration: userLists) { benchmark in
        blackHole(try Fixtures.userLists!.store.chats(in: .main, user: "user-3", offset: 5_000, limit: 50))
    }

    // Fan-out (issue 19): one post, in its own transaction, to a chat of M members; the sender
    // is a member, so M − 1 memberships gain an unread message and move. Goal: ≤ 2 ms at 1,000.
    for members in [2, 10, 100, 1_000, 10_000] {
        Benchmark("Store post to a chat of \(members) members", configuration: .init(
            metrics: [.wallClock], warmupIterations: 3, maxDuration: .seconds(4), maxIterations: 2_000,
            setup: { Fixtures.fanOut = try FanOutFixture(members: members) },
            teardown: { Fixtures.fanOut = nil }
        )) { benchmark in
            for _ in benchmark.scaledIterations { try Fixtures.fanOut!.post() }
        }
    }
}

/// SQL that makes `chats` chats (`n(i)` must count them), each with one message, and a temporary
/// table `last (chat_id, date, seq)` of each chat's order date and message for the memberships.
func lastMessagesSQL(chats: Int) -> String {
    """
    INSERT INTO chat (id, title, created_at)
    SELECT printf('chat-%07d', (i * 7919) % \(chats)), 'Chat number ' || i, 1000 FROM n;
    INSERT INTO message (id, chat_id, sender, text, original_text, sent_at)
    SELECT 'msg-' || rowid, id, 'user-' || (rowid % 97), 'the last message of chat ' || rowid || ', a line of text',
           'the last message of chat ' || rowid || ', a line of text', 1000000 + (rowid * 104729) % 5000000
    FROM chat;
    CREATE TEMP TABLE last AS SELECT chat.rowid AS chat_rowid, chat.id AS chat_id, message.sent_at AS date, message.seq AS seq
        FROM chat JOIN message ON message.chat_id = chat.id;
    """
}

/// A store of 100,000 chats and 10 users, each a member of 10,000 of them (1 in 10).
final class UserListsFixture {
    static let chats = 100_000
    let path: String
    let store: ChatDatabase

    init() throws {
        path = temporaryPath("user-lists")
        store = try ChatDatabase(path: path)
        let db = try Database(path: path)
        try db.execute("""
            BEGIN;
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < 10)
            INSERT INTO user (id, name, created_at) SELECT 'user-' || i, 'User ' || i, 0 FROM n;
            INSERT INTO list_counter SELECT id, list.name, 0 FROM user, (SELECT 'main' AS name UNION ALL SELECT 'archive') AS list
                WHERE id <> 'me';
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < \(Self.chats))
            \(lastMessagesSQL(chats: Self.chats))
            INSERT INTO membership (chat_id, user_id, last_message_date, unread, read_through, revision, joined, chat_rowid, head, last)
            SELECT chat_id, 'user-' || (chat_rowid % 10), date, chat_rowid % 3, 0, chat_rowid, 0, chat_rowid, seq, seq FROM last;
            UPDATE list_counter SET total = 10000 WHERE list = 'main' AND user_id <> 'me';
            COMMIT;
            """)
    }

    deinit {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// A store with one chat of `members` users (and the user `me`, not a member).
final class FanOutFixture {
    let path: String
    let store: ChatDatabase
    let members: Int
    var next = 0

    init(members: Int) throws {
        self.members = members
        path = temporaryPath("fan-out-\(members)")
        // Durability normal, as the figures before full became the default (one fsync a commit).
        store = try ChatDatabase(path: path, options: StoreOptions(durability: .normal))
        let users = (0..<members).map { "user-\($0)" }
        for result in try store.apply(users.map { .createUser(id: $0, name: $0, createdAt: 0) }) { _ = try result.get() }
        try store.apply(.createChat(id: "group", title: "Group", createdAt: 0, members: users))
    }

    deinit {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    func post() throws {
        next += 1
        try store.apply(.postMessage(Message(
            id: "msg-\(next)", chat: "group", sender: "user-\(next % members)",
            text: "message number \(next) with a little text", sentAt: Int64(1_000_000 + next))))
    }
}

extension Benchmark.Configuration {
    func with(setup: @escaping Benchmark.BenchmarkSetupHook, teardown: @escaping Benchmark.BenchmarkTeardownHook) -> Self {
        var copy = self
        copy.setup = setup
        copy.teardown = teardown
        return copy
    }
}

/// Benchmarks run one at a time; their fixtures live here between setup and teardown.
enum Fixtures {
    nonisolated(unsafe) static var ingest: IngestFixture?
    nonisolated(unsafe) static var bigList: BigListFixture?
    nonisolated(unsafe) static var fanOut: FanOutFixture?
    nonisolated(unsafe) static var userLists: UserListsFixture?
}

func temporaryPath(_ name: String) -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chatfeed-store-bench")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let path = directory.appendingPathComponent("\(name).sqlite").path
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    return path
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
}

/// A store with 1,000 chats that takes message posts, either through `ChatDatabase` or through raw
/// libsqlite3 calls that read and write the same rows (the chat's newest message, the message,
/// the change-log row, the membership of `me`, a mark for one message in 256).
final class IngestFixture {
    static let chatCount = 1000
    let path: String
    let store: ChatDatabase
    var raw: OpaquePointer?
    var rawStatements: [OpaquePointer?] = []
    var next = 0
    var chatUnread = [Int64](repeating: 0, count: IngestFixture.chatCount)
    var revision: Int64 = 0

    init(name: String, cacheSizeKiB: Int?) throws {
        path = temporaryPath(name)
        store = try ChatDatabase(path: path, options: StoreOptions(durability: .normal, cacheSizeKiB: cacheSizeKiB))
        _ = try store.apply((0..<Self.chatCount).map { .createChat(id: "chat-\($0)", title: "Chat \($0)", createdAt: 0) })
        revision = try store.latestChangeSequence()

        try check(sqlite3_open_v2(path, &raw, SQLITE_OPEN_READWRITE, nil))
        try exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000")
        if let cacheSizeKiB { try exec("PRAGMA cache_size = -\(cacheSizeKiB)") }
        for sql in [
            """
            SELECT COALESCE(ends.head, chat.head), COALESCE(ends.last, chat.last), ends.last_message_date
            FROM chat LEFT JOIN membership AS ends ON ends.chat_id = chat.id WHERE chat.id = ?1 LIMIT 1
            """,
            "INSERT INTO message (id, chat_id, sender, text, original_text, sent_at, previous) VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6)",
            "INSERT INTO change_log (chat_id, kind) VALUES (?1, 'update')",
            """
            UPDATE membership SET unread = unread + 1, revision = ?3, last_message_date = ?2, head = ?4, last = ?4
            WHERE chat_id = ?1 AND user_id = 'me'
            """,
            "BEGIN IMMEDIATE", "COMMIT",
            "INSERT INTO message_mark (chat_id, sent_at, id, seq) VALUES (?1, ?2, ?3, ?4)",
        ] {
            var statement: OpaquePointer?
            try check(sqlite3_prepare_v3(raw, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil))
            rawStatements.append(statement)
        }
    }

    deinit {
        rawStatements.forEach { sqlite3_finalize($0) }
        sqlite3_close_v2(raw)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    func nextMessage() -> Message {
        next += 1
        return Message(
            id: "msg-\(next)", chat: "chat-\(next % Self.chatCount)", sender: "user-\(next % 7)",
            text: "message number \(next) with a little text", sentAt: Int64(1_000_000 + next))
    }

    func postThroughStore(count: Int, groupSize: Int) throws {
        var group: [ChatEvent] = []
        group.reserveCapacity(groupSize)
        for _ in 0..<count {
            group.append(.postMessage(nextMessage()))
            if group.count == groupSize {
                if groupSize == 1 {
                    _ = try store.apply(group[0])
                } else {
                    for result in try store.apply(group) { _ = try result.get() }
                }
                group.removeAll(keepingCapacity: true)
            }
        }
        if !group.isEmpty { _ = try store.apply(group) }
    }

    func insertRaw(count: Int, groupSize: Int) throws {
        let readHead = rawStatements[0], insertMessage = rawStatements[1], insertChange = rawStatements[2]
        let updateMembership = rawStatements[3], begin = rawStatements[4], commit = rawStatements[5]
        let insertMark = rawStatements[6]
        var inGroup = 0
        for _ in 0..<count {
            if inGroup == 0 { try step(begin) }
            let message = nextMessage()
            try bind(readHead, 1, message.chat)
            guard sqlite3_step(readHead) == SQLITE_ROW else { throw BenchmarkFailure(description: "no chat \(message.chat)") }
            let head = sqlite3_column_type(readHead, 0) == SQLITE_NULL ? nil : Optional(sqlite3_column_int64(readHead, 0))
            sqlite3_reset(readHead)
            try bind(insertMessage, 1, message.id)
            try bind(insertMessage, 2, message.chat)
            try bind(insertMessage, 3, message.sender)
            try bind(insertMessage, 4, message.text)
            sqlite3_bind_int64(insertMessage, 5, message.sentAt)
            if let head { sqlite3_bind_int64(insertMessage, 6, head) } else { sqlite3_bind_null(insertMessage, 6) }
            try step(insertMessage)
            let seq = sqlite3_last_insert_rowid(raw)
            if seq % 256 == 0 {
                try bind(insertMark, 1, message.chat)
                sqlite3_bind_int64(insertMark, 2, message.sentAt)
                try bind(insertMark, 3, message.id)
                sqlite3_bind_int64(insertMark, 4, seq)
                try step(insertMark)
            }
            revision += 1
            try bind(insertChange, 1, message.chat)
            try step(insertChange)
            try bind(updateMembership, 1, message.chat)
            sqlite3_bind_int64(updateMembership, 2, message.sentAt)
            sqlite3_bind_int64(updateMembership, 3, revision)
            sqlite3_bind_int64(updateMembership, 4, seq)
            try step(updateMembership)
            inGroup += 1
            if inGroup == groupSize {
                try step(commit)
                inGroup = 0
            }
        }
        if inGroup > 0 { try step(commit) }
    }

    private func bind(_ statement: OpaquePointer?, _ index: Int32, _ text: String) throws {
        var text = text
        try text.withUTF8 { bytes in
            try check(sqlite3_bind_text(
                statement, index, UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self),
                Int32(bytes.count), chatfeed_sqlite_transient()))
        }
    }

    private func step(_ statement: OpaquePointer?) throws {
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        if code != SQLITE_DONE && code != SQLITE_ROW { try check(code) }
    }

    private func exec(_ sql: String) throws { try check(sqlite3_exec(raw, sql, nil, nil, nil)) }

    private func check(_ code: Int32) throws {
        if code != SQLITE_OK { throw BenchmarkFailure(description: "sqlite3 error \(code): \(String(cString: sqlite3_errmsg(raw)))") }
    }
}

/// A store of `chats` chats, each with a last message, made by SQL.
final class BigListFixture {
    let path: String
    let store: ChatDatabase

    init(chats: Int) throws {
        path = temporaryPath("big-list")
        store = try ChatDatabase(path: path)
        let db = try Database(path: path)
        try db.execute("""
            BEGIN;
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < \(chats))
            \(lastMessagesSQL(chats: chats))
            INSERT INTO membership (chat_id, user_id, last_message_date, unread, read_through, revision, joined, chat_rowid, head, last)
            SELECT chat_id, 'me', date, chat_rowid % 5, 0, chat_rowid, 0, chat_rowid, seq, seq FROM last;
            -- The list's size, as the store keeps it (a load reserves room for it).
            INSERT OR REPLACE INTO list_counter SELECT 'me', 'main', count(*) FROM membership WHERE user_id = 'me';
            COMMIT;
            """)
    }

    deinit {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Steps through the query of `allChats(withContent: false)` and reads each column it reads,
    /// without building any Swift value.
    func stepMembershipsRaw() throws -> Int {
        var raw: OpaquePointer?
        guard sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            throw BenchmarkFailure(description: "cannot open \(path)")
        }
        defer { sqlite3_close_v2(raw) }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(raw, """
            SELECT chat_id, unread, revision, list, pin_order, muted, chat_rowid, last_message_date FROM membership
            WHERE +user_id = ?1 ORDER BY chat_id
            """, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, "me", -1, nil)
        var sum = 0
        while sqlite3_step(statement) == SQLITE_ROW {
            sum += Int(sqlite3_column_bytes(statement, 0)) + Int(sqlite3_column_text(statement, 0)![0])
            sum += Int(sqlite3_column_text(statement, 3)![0])
            for column: Int32 in [1, 2, 4, 5, 7] { sum &+= Int(sqlite3_column_int64(statement, column)) }
        }
        return sum
    }

    /// Steps through every membership of `me` with its chat row and last message, in storage order (SQLite would
    /// sort 1,000,000 rows for the list order, which `allChats()` makes itself), without building
    /// any Swift value.
    func stepRaw() throws -> Int {
        var raw: OpaquePointer?
        guard sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            throw BenchmarkFailure(description: "cannot open \(path)")
        }
        defer { sqlite3_close_v2(raw) }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(raw, """
            SELECT chat.id, chat.title, chat.created_at, lm.id, lm.sender, lm.text, lm.sent_at, m.last_message_date,
                   m.unread, m.revision, m.list, m.pin_order, m.muted
            FROM membership AS m JOIN chat ON chat.id = m.chat_id
            LEFT JOIN message AS lm ON lm.seq = m.last
            WHERE +m.user_id = 'me'
            """, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        var rows = 0
        var bytes = 0
        while sqlite3_step(statement) == SQLITE_ROW {
            rows += 1
            bytes += Int(sqlite3_column_bytes(statement, 0)) + Int(sqlite3_column_bytes(statement, 5))
        }
        return rows + bytes
    }
}
