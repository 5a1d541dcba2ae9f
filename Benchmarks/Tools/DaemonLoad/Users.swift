import BenchmarkSupport
import ChatModel
import ChatStore
import Foundation
import JSONCodec

#if canImport(Glibc)
import Glibc
#endif

// `DaemonLoad users`: issue 19's figures, end to end through the daemon's stdin/stdout.
//
// The database: `--users` users (u0…), `--chats` chats of `--members` members each (the members
// of chat c are u((c·members + k) mod users), so that every user is in about
// chats·members/users chats), plus three "heavy" users with 100, 1,000 and 10,000 chats (the
// first chats) for the first-subscribe load.
// It measures, in one run of the daemon:
//   1. resident memory with every user idle, beside an empty database's;
//   2. a user's first subscribe (full list) at 100, 1,000 and 10,000 chats;
//   3. resident memory with `--subscribed` users each holding a top-20 window.
// Fan-out end to end is `DaemonLoad fanout` (Fanout.swift).

struct UsersOptions {
    var users = 100_000
    var chats = 100_000
    var members = 10
    var subscribed = 1_000
    var daemon = defaultDaemonPath()
    var config = defaultConfigPath()
    var database = NSTemporaryDirectory() + "chatfeed-users-bench.sqlite"
    var fresh = false
}

enum UsersDataSet {
    static func userID(_ n: Int) -> String { "u\(n)" }
    static let heavy = [100, 1_000, 10_000]
    static func heavyID(_ chats: Int) -> String { "heavy-\(chats)" }

    /// Creates the database through `ChatDatabase` group commits (10,000 events each).
    static func prepare(_ o: UsersOptions) throws {
        for suffix in ["", "-wal", "-shm"] { unlink(o.database + suffix) }
        let start = nowNanoseconds()
        let store = try ChatDatabase(path: o.database, options: StoreOptions(durability: .normal))
        var pending: [ChatEvent] = []
        func add(_ event: ChatEvent) throws {
            pending.append(event)
            if pending.count == 10_000 { try flush() }
        }
        func flush() throws {
            for case .failure(let error) in try store.apply(pending) { throw error }
            pending.removeAll(keepingCapacity: true)
        }
        for n in 0..<o.users {
            try add(.createUser(id: userID(n), name: "User \(n)", createdAt: DataSet.seedBase))
        }
        for chats in heavy { try add(.createUser(id: heavyID(chats), name: "Heavy \(chats)", createdAt: DataSet.seedBase)) }
        try flush()
        for c in 0..<o.chats {
            var members: [String] = []
            for k in 0..<o.members {
                let member = userID((c * o.members + k) % max(o.users, 1))
                if !members.contains(member) { members.append(member) }
            }
            for chats in heavy where c < chats { members.append(heavyID(chats)) }
            try add(.createChat(id: DataSet.chatID(c), title: "Chat \(c)", createdAt: DataSet.seedBase + Int64(c), members: members))
            try add(.postMessage(Message(
                id: "s\(c)", chat: DataSet.chatID(c), sender: members[0], text: DataSet.text(c),
                sentAt: DataSet.seedBase + 1_000_000 + Int64(c))))
        }
        try flush()
        let seconds = Double(nowNanoseconds() - start) / 1e9
        FileHandle.standardError.write(Data("prepared \(o.database) in \(format(seconds, 1)) s\n".utf8))
    }
}

/// The daemon with a reader thread that timestamps every line.
private final class UsersSession: @unchecked Sendable {
    let daemon: DaemonProcess
    private let condition = NSCondition()
    private var responses: [Int64: (JSONValue, UInt64)] = [:]
    private var ended = false
    private var nextID: Int64 = 1

    init(_ o: UsersOptions, database: String) throws {
        // Every subscribed user at once.
        let config = try configCopy(of: o.config, setting: ["maxSubscriptions": max(256, o.subscribed) + 16])
        daemon = try DaemonProcess(
            executable: o.daemon, arguments: ["--database", database, "--config", config, "--log-level", "warning"],
            stderrPath: database + ".stderr.log")
        let thread = Thread { [self] in
            var reader = LineReader(fd: daemon.stdoutFD)
            while reader.readLines({ line, now in received(line, at: now) }) {}
            condition.lock(); ended = true; condition.broadcast(); condition.unlock()
        }
        thread.name = "users-reader"
        thread.start()
    }

    private func received(_ line: UnsafeRawBufferPointer, at now: UInt64) {
        // Notifications are not measured here.
        if line.starts(with: #"{"jsonrpc":"2.0","method":"#.utf8) { return }
        guard let value = try? JSONValue(parsing: line), let id = value["id"]?.int64Value else { return }
        condition.lock(); responses[id] = (value, now); condition.broadcast(); condition.unlock()
    }

    /// Sends a request and returns its id.
    @discardableResult
    func send(_ method: String, _ params: [String: JSONValue]) -> Int64 {
        condition.lock(); let id = nextID; nextID += 1; condition.unlock()
        let request: JSONValue = .object([
            "jsonrpc": .string("2.0"), "id": .number(JSONNumber(id)), "method": .string(method), "params": .object(JSONObject(params.map { ($0.key, $0.value) })),
        ])
        _ = daemon.write(request.serialized() + [0x0A])
        return id
    }

    /// Waits for the response to `id`: its result and arrival time.
    func response(_ id: Int64, timeout: TimeInterval = 600) throws -> (JSONValue, UInt64) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock(); defer { condition.unlock() }
        while responses[id] == nil {
            if ended { throw BenchError("chatfeedd ended; see its .stderr.log") }
            if !condition.wait(until: deadline) { throw BenchError("no response to \(id) in \(timeout) s") }
        }
        let (value, at) = responses.removeValue(forKey: id)!
        if let error = value["error"] { throw BenchError("request \(id) failed: \(error.description)") }
        return (value["result"] ?? .null, at)
    }

    func call(_ method: String, _ params: [String: JSONValue]) throws -> JSONValue {
        try response(send(method, params)).0
    }

    func shutDown() -> Int32 {
        daemon.closeInput()
        return daemon.wait()
    }
}

func runUsers(_ o: UsersOptions) throws {
    let marker = o.database + ".params"
    let wanted = "users=\(o.users) chats=\(o.chats) members=\(o.members)"
    if o.fresh || (try? String(contentsOfFile: marker, encoding: .utf8)) != wanted {
        unlink(marker)
        try UsersDataSet.prepare(o)
        try wanted.write(toFile: marker, atomically: true, encoding: .utf8)
    } else {
        FileHandle.standardError.write(Data("reusing \(o.database) (\(wanted))\n".utf8))
        // A file of an earlier schema is migrated here, not by the measured daemon's start.
        _ = try ChatDatabase(path: o.database)
    }
    let emptyPath = o.database + ".empty.sqlite"
    try ensureDatabase(path: emptyPath, chats: 0, messagesPerChat: 0, fresh: o.fresh)
    print("users: \(grouped(o.users)) users, \(grouped(o.chats)) chats of \(o.members) members (\(grouped(o.chats * o.members)) memberships); \(ProcessInfo.processInfo.activeProcessorCount) cores; load \(loadAverage())")

    // 1. Idle users cost nothing: resident memory beside an empty database's.
    let empty = try UsersSession(o, database: emptyPath)
    _ = try empty.call("chats.list", ["limit": .number(JSONNumber(1))])
    let emptyRSS = empty.daemon.statusKiB("VmRSS") ?? 0
    _ = empty.shutDown()

    let session = try UsersSession(o, database: o.database)
    _ = try session.call("chats.list", ["limit": .number(JSONNumber(1))])
    let idleRSS = session.daemon.statusKiB("VmRSS") ?? 0
    // After the reading: its counts scan the memberships through the page cache.
    let stats = try session.call("server.stats", [:])
    print("1. idle: VmRSS \(format(Double(idleRSS) / 1024, 1)) MiB with every user idle, \(format(Double(emptyRSS) / 1024, 1)) MiB on an empty database (\(stats.description))")

    // 2. A user's first subscribe: the whole list, loaded from the store.
    for chats in UsersDataSet.heavy {
        let start = nowNanoseconds()
        let (result, at) = try session.response(session.send("feed.subscribe", ["user": .string(UsersDataSet.heavyID(chats))]))
        let ms = Double(at - start) / 1e6
        let items = result["items"]?.arrayValue?.count ?? -1
        let pageStart = nowNanoseconds()
        let (_, pageAt) = try session.response(session.send("chats.list", ["user": .string(UsersDataSet.heavyID(chats)), "limit": .number(JSONNumber(50)), "offset": .number(JSONNumber(Int64(chats / 2)))]))
        print("2. first subscribe of a user with \(grouped(chats)) chats: \(format(ms, 2)) ms (\(grouped(items)) items); then chats.list of 50 at offset \(grouped(chats / 2)): \(format(Double(pageAt - pageStart) / 1e6, 2)) ms")
    }

    // 3. Subscribed users: a top-20 window each.
    let before = session.daemon.statusKiB("VmRSS") ?? 0
    let subscribeStart = nowNanoseconds()
    let ids = (0..<o.subscribed).map { n in
        session.send("feed.subscribe", ["user": .string(UsersDataSet.userID(n * max(1, o.users / max(o.subscribed, 1)))), "limit": .number(JSONNumber(20))])
    }
    var subscriptions: [String] = []
    for id in ids { subscriptions.append(try session.response(id).0["subscription"]?.stringValue ?? "") }
    let subscribeSeconds = Double(nowNanoseconds() - subscribeStart) / 1e9
    let after = session.daemon.statusKiB("VmRSS") ?? 0
    print("3. \(grouped(o.subscribed)) users subscribed (top-20 windows) in \(format(subscribeSeconds, 2)) s: VmRSS \(format(Double(before) / 1024, 1)) → \(format(Double(after) / 1024, 1)) MiB, \(format(Double(after - before) * 1024 / Double(max(o.subscribed, 1)), 0)) bytes per subscribed user")
    for subscription in subscriptions {
        session.send("feed.unsubscribe", ["subscription": .string(subscription)])
    }
    _ = try session.call("server.version", [:])

    let status = session.shutDown()
    if status != 0 { throw BenchError("chatfeedd exited with status \(status)") }
}

/// /proc/loadavg's first three fields.
func loadAverage() -> String {
    ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").prefix(3).joined(separator: " ")
}
