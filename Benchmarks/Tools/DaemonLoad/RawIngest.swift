import BenchmarkSupport
import CSQLite
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The baseline for the daemon's bytes written per post: the same posts (same chats, ids, texts,
/// times as `ingest` with the same seed) written by raw libsqlite3 calls into the same prepared
/// database and schema, in transactions of `group` posts, with SQLite's own checkpointing.
/// Each post inserts the message (unread), appends the change-log row and updates the chat's
/// memberships (unread, revision, order date): what a post must write, without
/// the daemon's reads, savepoints and background checkpoints.
struct RawIngestOptions {
    var chats = 10_000
    var messagesPerChat = 1
    var posts = 100_000
    var group = 400
    var seed: UInt64 = 1
    var runs = 1
    /// `PRAGMA wal_autocheckpoint` (SQLite's default is 1,000 pages).
    var autoCheckpointPages = 1000
    var durability = "full"
    var database = NSTemporaryDirectory() + "chatfeed-raw-bench.sqlite"
    /// Rebuilds the prepared database with this page size first (VACUUM); nil keeps it.
    var pageSize: Int?
    /// SQL run on the prepared database before the posts (to try a schema change).
    var prepareSQL: String?
    /// SQLite's memory statistics (`SQLITE_CONFIG_MEMSTATUS`, on by default; `chatfeedd` turns
    /// them off).
    var memoryStatistics = true
    /// Posts per second, paced as `ingest --rate` paces them: 0 writes them as fast as SQLite
    /// takes them in transactions of `group`. Paced, each transaction holds the posts that are due
    /// when the last one ends (at most `group`): the daemon's group commit, without the daemon.
    var rate: Double = 0
    /// Paced runs stop after this many seconds (or `posts`).
    var durationSeconds: Double = 10
}

struct RawIngestResult {
    var posts = 0
    var commits = 0
    var seconds = 0.0
    var writtenBytes = 0
    /// Bytes passed to write(2)/pwrite(2) (wchar), page overwrites included.
    var writeCallBytes = 0
    /// Bytes the closing TRUNCATE checkpoint wrote (not in `writtenBytes`).
    var finalCheckpointBytes = 0
    /// Paced runs: milliseconds from each post's due time to the end of its transaction's COMMIT.
    var commitLatency = Percentiles([])
    /// CPU seconds of this process during the posts.
    var cpuSeconds = 0.0
}

/// write_bytes of /proc/self/io: bytes this process caused to be sent to the storage layer.
func selfWriteBytes(_ field: String = "write_bytes") -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ": ") {
        return Int(line.dropFirst(field.count + 2)) ?? 0
    }
    return 0
}

func runRawIngest(_ o: RawIngestOptions, run: Int) throws -> RawIngestResult {
    try DataSet.prepare(path: o.database, chats: o.chats, messagesPerChat: o.messagesPerChat)
    // The same chat for post i as `ingest` (IngestState draws them from the same generator).
    var g = SplitMix64(seed: o.seed &+ UInt64(run))
    let chatOfPost = (0..<o.posts).map { _ in Int(g.next() % UInt64(o.chats)) }

    var db: OpaquePointer?
    func check(_ code: Int32) throws {
        if code != SQLITE_OK && code != SQLITE_DONE && code != SQLITE_ROW {
            throw BenchError("sqlite3 error \(code): \(String(cString: sqlite3_errmsg(db)))")
        }
    }
    try check(sqlite3_open_v2(o.database, &db, SQLITE_OPEN_READWRITE, nil))
    defer { sqlite3_close_v2(db) }
    if let pageSize = o.pageSize {
        try check(sqlite3_exec(db, "PRAGMA journal_mode = DELETE; PRAGMA page_size = \(pageSize); VACUUM;", nil, nil, nil))
    }
    if let sql = o.prepareSQL { try check(sqlite3_exec(db, sql, nil, nil, nil)) }
    try check(sqlite3_exec(db, """
        PRAGMA journal_mode = WAL; PRAGMA synchronous = \(o.durability == "full" ? "FULL" : "NORMAL");
        PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA cache_size = -65536;
        PRAGMA wal_autocheckpoint = \(o.autoCheckpointPages);
        """, nil, nil, nil))
    var statements: [OpaquePointer?] = []
    defer { statements.forEach { sqlite3_finalize($0) } }
    for sql in [
        // Schema version 13: the chat's newest message (a membership's `head`, which the
        // chat's existence check reads), the message after it in its chain, the change-log row,
        // then the membership of every member but the sender (here `me` alone), which holds the
        // order date and the chain's ends (no chat row; the list's unread counters are summed
        // when read); a mark for one message in 256 (`ChatDatabase.markInterval`).
        """
        SELECT COALESCE(ends.head, chat.head), COALESCE(ends.last, chat.last), ends.last_message_date
        FROM chat LEFT JOIN membership AS ends ON ends.chat_id = chat.id WHERE chat.id = ?1 LIMIT 1
        """,
        """
        INSERT INTO message (id, chat_id, sender, text, original_text, sent_at, arrival, previous)
        VALUES (?1, ?2, ?3, ?4, ?4, ?5, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'change_log'), 0) + 1, ?6)
        """,
        "INSERT INTO change_log (chat_id, kind) VALUES (?1, 'update')",
        """
        UPDATE membership SET unread = unread + 1, revision = last_insert_rowid(), last_message_date = ?3, head = ?4, last = ?4
        WHERE chat_id = ?1 AND user_id <> ?2
        """,
        "BEGIN IMMEDIATE", "COMMIT",
        "INSERT INTO message_mark (chat_id, sent_at, id, seq) VALUES (?1, ?2, ?3, ?4)",
    ] {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil))
        statements.append(statement)
    }
    let (readHead, insertMessage, insertChange, postToMembers, begin, commit, insertMark) =
        (statements[0], statements[1], statements[2], statements[3], statements[4], statements[5], statements[6])
    func step(_ statement: OpaquePointer?) throws {
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        try check(code)
    }
    func bind(_ statement: OpaquePointer?, _ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            _ = sqlite3_bind_text(
                statement, index, UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self),
                Int32(bytes.count), chatfeed_sqlite_transient())
        }
    }

    var result = RawIngestResult()
    let bytesStart = selfWriteBytes()
    let callsStart = selfWriteBytes("wchar")
    let cpuStart = clientCPUSeconds()
    let start = nowNanoseconds()
    func write(_ i: Int) throws {
        let chat = DataSet.chatID(chatOfPost[i])
        let id = "m\(i)", sender = "user\(i % 997)", text = DataSet.text(i)
        let sentAt = DataSet.postBase + Int64(i)
        bind(readHead, 1, chat)
        guard sqlite3_step(readHead) == SQLITE_ROW else { throw BenchError("no chat \(chat)") }
        let head = sqlite3_column_type(readHead, 0) == SQLITE_NULL ? nil : Optional(sqlite3_column_int64(readHead, 0))
        sqlite3_reset(readHead)
        bind(insertMessage, 1, id)
        bind(insertMessage, 2, chat)
        bind(insertMessage, 3, sender)
        bind(insertMessage, 4, text)
        sqlite3_bind_int64(insertMessage, 5, sentAt)
        if let head { sqlite3_bind_int64(insertMessage, 6, head) } else { sqlite3_bind_null(insertMessage, 6) }
        try step(insertMessage)
        let seq = sqlite3_last_insert_rowid(db)
        if seq % 256 == 0 {
            bind(insertMark, 1, chat)
            sqlite3_bind_int64(insertMark, 2, sentAt)
            bind(insertMark, 3, id)
            sqlite3_bind_int64(insertMark, 4, seq)
            try step(insertMark)
        }
        bind(insertChange, 1, chat)
        try step(insertChange)
        bind(postToMembers, 1, chat)
        bind(postToMembers, 2, sender)
        sqlite3_bind_int64(postToMembers, 3, sentAt)
        sqlite3_bind_int64(postToMembers, 4, seq)
        try step(postToMembers)
    }
    if o.rate > 0 {
        // Paced: post i is due at start + i / rate; each transaction takes every post due when
        // the last one ended (at most `group`), as the daemon's group commit does.
        let posts = min(o.posts, Int(o.rate * o.durationSeconds))
        func due(_ i: Int) -> UInt64 { start + UInt64(Double(i) * 1e9 / o.rate) }
        var latencies: [Double] = []
        latencies.reserveCapacity(posts)
        var next = 0
        while next < posts {
            let now = nowNanoseconds()
            if due(next) > now { sleepNanoseconds(due(next) - now); continue }
            var end = next + 1
            while end < posts && end - next < o.group && due(end) <= now { end += 1 }
            try step(begin)
            for i in next..<end { try write(i) }
            try step(commit)
            let committed = nowNanoseconds()
            for i in next..<end { latencies.append(Double(committed - due(i)) / 1e6) }
            result.commits += 1
            next = end
        }
        result.posts = posts
        result.commitLatency = Percentiles(latencies)
    } else {
        var inGroup = 0
        for i in 0..<o.posts {
            if inGroup == 0 { try step(begin) }
            try write(i)
            inGroup += 1
            if inGroup == o.group || i == o.posts - 1 {
                try step(commit)
                result.commits += 1
                inGroup = 0
            }
        }
        result.posts = o.posts
    }
    result.seconds = Double(nowNanoseconds() - start) / 1e9
    result.writtenBytes = selfWriteBytes() - bytesStart
    result.writeCallBytes = selfWriteBytes("wchar") - callsStart
    result.cpuSeconds = clientCPUSeconds() - cpuStart
    let beforeFinal = selfWriteBytes()
    try check(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nil, nil, nil))
    result.finalCheckpointBytes = selfWriteBytes() - beforeFinal
    return result
}

func printRawIngest(_ r: RawIngestResult, options o: RawIngestOptions, run: Int) {
    print("""
        run \(run): \(grouped(r.posts)) posts in \(grouped(r.commits)) transactions of \(o.rate > 0 ? "at most " : "")\(o.group) in \(format(r.seconds, 2)) s \
        (\(grouped(Int(Double(r.posts) / r.seconds))) posts/s); wrote \(grouped(r.writtenBytes / 1024)) KiB: \
        \(grouped(r.writtenBytes / max(r.posts, 1))) bytes/post (write_bytes; \(grouped(r.writeCallBytes / max(r.posts, 1))) through write calls), then \(grouped(r.finalCheckpointBytes / 1024)) KiB \
        for the closing TRUNCATE checkpoint; \(format(r.cpuSeconds / Double(max(r.posts, 1)) * 1e6, 1)) µs CPU per post
        """)
    if o.rate > 0 {
        let p = r.commitLatency
        print("""
              paced at \(grouped(Int(o.rate)))/s: \(format(Double(r.posts) / Double(max(r.commits, 1)), 1)) posts per transaction; \
            due→committed p50 \(format(p.percentile(50))) ms  p90 \(format(p.percentile(90))) ms  \
            p99 \(format(p.percentile(99))) ms  max \(format(p.max)) ms
            """)
    }
}
