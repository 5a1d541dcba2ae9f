import ChatModel
import Foundation
import JSONCodec
import ListDiff
import WireProtocol

/// A subscriber's copy of its chat list, kept only by applying what the daemon sends: every
/// `feed.batch` through `UIKitBatchModel.apply` (the UIKit rules), every `feed.reset` by
/// replacement. It checks the feed's promises on the way:
/// - `seq` starts at 1 and has no gaps; never more than `maxInFlight` unacknowledged;
/// - `count` is the mirror's size, `min(limit, total)`;
/// - ids are unique; after a pure-update batch or a reset the mirror is in chat-list order
///   (a moment of the list);
/// - a row moved by a structural batch is updated, with another `lastMessageDate`, by the
///   deferred batch that immediately follows (only chats whose order key changed may move);
/// - with a `MomentLog`: the snapshot, the list before each structural batch, and the list after
///   each pure-update batch and reset are the chat list at one moment of the commit order, and
///   those moments never go back.
final class FeedMirror {
    let subscription: String
    let limit: Int?
    let maxInFlight: Int
    private(set) var rows: [Chat]
    private(set) var lastSeq: Int64 = 0
    /// The highest seq this client has acknowledged.
    private(set) var lastAcked: Int64 = 0
    /// Next notification of the daemon's log to look at.
    private var cursor: Int
    /// Ids moved by the last structural batch, with their `lastMessageDate` before it.
    private var movedAwaitingUpdate: [String: Int64] = [:]
    private(set) var batches = 0
    private(set) var structuralBatches = 0
    private(set) var updateBatches = 0
    private(set) var resets = 0
    private(set) var moves = 0
    /// Set once `feed.unsubscribe` answered: no notification may follow.
    private(set) var unsubscribed = false
    /// The lists after each write, when the test knows them.
    private let moments: MomentLog?
    /// The earliest moment the mirror may show next.
    private(set) var moment = 0

    /// Subscribes and takes the snapshot. The notification cursor is taken before the request,
    /// so that notifications that follow the response at once are not missed.
    init(daemon: Daemon, limit: Int? = nil, maxInFlight: Int, moments: MomentLog? = nil) throws {
        self.moments = moments
        cursor = daemon.notificationCount
        var params: JSONObject = ["maxInFlight": .integer(maxInFlight)]
        if let limit { params.append("limit", .integer(limit)) }
        let result = try daemon.call("feed.subscribe", .object(params))
        guard let subscription = result["subscription"]?.stringValue, result["seq"]?.int64Value == 0,
              let total = result["total"]?.int64Value, let items = result["items"]?.arrayValue
        else { throw HarnessError("bad feed.subscribe result \(result)") }
        self.subscription = subscription
        self.limit = limit
        self.maxInFlight = maxInFlight
        rows = try items.map { try Chat(jsonValue: $0) }
        let expected = limit.map { min($0, Int(total)) } ?? Int(total)
        guard rows.count == expected else {
            throw HarnessError("snapshot of \(subscription) has \(rows.count) rows for total \(total), limit \(limit.map(String.init) ?? "none")")
        }
        try checkOrder("the snapshot")
        try checkMoment("the snapshot")
    }

    /// The mirror is the list (or its window) after some write at or after `moment`.
    func checkMoment(_ context: String) throws {
        guard let moments else { return }
        guard let found = moments.firstMatch(rows, limit: limit, from: moment) else {
            throw fail("\(context) is not the chat list at any moment from write \(moment) on (of \(moments.count)): \(rows.map(\.id))")
        }
        moment = found
    }

    private func fail(_ message: String) -> HarnessError {
        HarnessError("subscription \(subscription) (limit \(limit.map(String.init) ?? "none"), maxInFlight \(maxInFlight)) after seq \(lastSeq): \(message)")
    }

    /// Applies every notification of this subscription that arrived since the last call.
    @discardableResult
    func catchUp(_ daemon: Daemon) throws -> Int {
        let pending = daemon.notifications(from: cursor)
        cursor += pending.count
        var applied = 0
        for message in pending where message["params"]?["subscription"]?.stringValue == subscription {
            try apply(message)
            applied += 1
        }
        return applied
    }

    /// Applies one `feed.batch` or `feed.reset` notification.
    func apply(_ message: JSONValue) throws {
        guard !unsubscribed else { throw fail("a notification after unsubscribe: \(message)") }
        guard let method = message["method"]?.stringValue, let params = message["params"],
              let seq = params["seq"]?.int64Value, let count = params["count"]?.int64Value,
              let total = params["total"]?.int64Value
        else { throw fail("malformed notification \(message)") }
        guard seq == lastSeq + 1 else { throw fail("seq \(seq) follows \(lastSeq)") }
        if maxInFlight > 0, seq - lastAcked > Int64(maxInFlight) {
            throw fail("seq \(seq) sent with only \(lastAcked) acknowledged (maxInFlight \(maxInFlight))")
        }
        lastSeq = seq
        switch method {
        case "feed.batch":
            let batch = try Self.batch(from: params)
            if batch.isStructural { try checkMoment("the list before structural batch \(seq)") }
            let before = rows
            do {
                rows = try UIKitBatchModel.apply(batch, to: rows)
            } catch {
                throw fail("batch \(seq) breaks UIKit's rules: \(error); batch \(params)")
            }
            batches += 1
            if !movedAwaitingUpdate.isEmpty {
                guard !batch.isStructural else {
                    throw fail("batch \(seq) is structural, but the rows moved by batch \(seq - 1) (\(movedAwaitingUpdate.keys.sorted())) were not updated first")
                }
                let updated = Dictionary(batch.updates.map { ($0.item.id, $0.item) }, uniquingKeysWith: { $1 })
                for (id, oldDate) in movedAwaitingUpdate {
                    guard let chat = updated[id] else {
                        throw fail("chat \(id) moved in batch \(seq - 1) but the deferred batch \(seq) does not update it")
                    }
                    guard chat.lastMessageDate != oldDate else {
                        throw fail("chat \(id) moved in batch \(seq - 1) though its lastMessageDate \(oldDate) did not change")
                    }
                }
                movedAwaitingUpdate = [:]
            }
            if batch.isStructural {
                structuralBatches += 1
                moves += batch.moves.count
                for move in batch.moves { movedAwaitingUpdate[before[move.from].id] = before[move.from].lastMessageDate }
            } else {
                updateBatches += 1
                guard !batch.updates.isEmpty else { throw fail("batch \(seq) is empty") }
                try checkOrder("pure-update batch \(seq)")
                try checkMoment("the list after pure-update batch \(seq)")
            }
        case "feed.reset":
            guard let items = params["items"]?.arrayValue else { throw fail("reset without items: \(params)") }
            rows = try items.map { try Chat(jsonValue: $0) }
            resets += 1
            movedAwaitingUpdate = [:]
            try checkOrder("reset \(seq)")
            try checkMoment("reset \(seq)")
        default:
            throw fail("unexpected notification \(method)")
        }
        guard Int64(rows.count) == count else { throw fail("\(method) \(seq) says count \(count), the mirror has \(rows.count) rows") }
        let expected = limit.map { min(Int64($0), total) } ?? total
        guard count == expected else { throw fail("\(method) \(seq): count \(count) with total \(total)") }
        var seen = Set<String>()
        for row in rows where !seen.insert(row.id).inserted { throw fail("chat \(row.id) twice after \(method) \(seq)") }
    }

    /// The rows are in chat-list order: `lastMessageDate` descending, then id ascending bytewise.
    func checkOrder(_ context: String) throws {
        for (a, b) in zip(rows, rows.dropFirst()) where !Self.precedes(a, b) {
            throw fail("after \(context), \(a.id) (\(a.lastMessageDate)) comes before \(b.id) (\(b.lastMessageDate))")
        }
    }

    static func precedes(_ a: Chat, _ b: Chat) -> Bool {
        if a.lastMessageDate != b.lastMessageDate { return a.lastMessageDate > b.lastMessageDate }
        return Array(a.id.utf8).lexicographicallyPrecedes(Array(b.id.utf8))
    }

    /// The `Batch<Chat>` of a `feed.batch` notification's params.
    static func batch(from params: JSONValue) throws -> Batch<Chat> {
        func ints(_ key: String) throws -> [Int] {
            guard let array = params[key]?.arrayValue else { throw HarnessError("feed.batch without \(key): \(params)") }
            return try array.map {
                guard let value = $0.int64Value else { throw HarnessError("bad \(key) entry \($0)") }
                return Int(value)
            }
        }
        func indexed(_ key: String) throws -> [IndexedItem<Chat>] {
            guard let array = params[key]?.arrayValue else { throw HarnessError("feed.batch without \(key): \(params)") }
            return try array.map {
                guard let index = $0["index"]?.int64Value, let chat = $0["chat"] else { throw HarnessError("bad \(key) entry \($0)") }
                return IndexedItem(index: Int(index), item: try Chat(jsonValue: chat))
            }
        }
        guard let moves = params["moves"]?.arrayValue else { throw HarnessError("feed.batch without moves: \(params)") }
        return Batch(
            deletes: try ints("deletes"),
            inserts: try indexed("inserts"),
            moves: try moves.map {
                guard let from = $0["from"]?.int64Value, let to = $0["to"]?.int64Value else { throw HarnessError("bad move \($0)") }
                return Move(from: Int(from), to: Int(to))
            },
            updates: try indexed("updates"))
    }

    // MARK: Acks

    /// Acknowledges up to `seq` (as a notification, or as a request whose id is returned).
    @discardableResult
    func ack(_ daemon: Daemon, upTo seq: Int64, asRequest: Bool) -> JSONValue? {
        let params: JSONValue = ["subscription": .string(subscription), "seq": .integer(seq)]
        lastAcked = max(lastAcked, seq)
        if asRequest { return daemon.post("feed.ack", params) }
        daemon.notify("feed.ack", params)
        return nil
    }

    /// Unsubscribes; no notification may follow the response.
    func unsubscribe(_ daemon: Daemon) throws {
        try daemon.call("feed.unsubscribe", ["subscription": .string(subscription)])
        try catchUp(daemon)
        unsubscribed = true
    }

    /// Acks what was received until the daemon has nothing left to send (checked with
    /// `server.stats`, whose response follows every notification sent before it); returns the
    /// last stats.
    static func settle(_ mirrors: [FeedMirror], daemon: Daemon, timeout: TimeInterval = Daemon.defaultTimeout) throws -> JSONValue {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            let stats = try daemon.call("server.stats")
            let live = mirrors.filter { !$0.unsubscribed }
            for mirror in live { try mirror.catchUp(daemon) }
            guard let entries = stats["subscriptions"]?.arrayValue else { throw HarnessError("server.stats without subscriptions: \(stats)") }
            let byID = Dictionary(entries.compactMap { e in e["subscription"]?.stringValue.map { ($0, e) } }, uniquingKeysWith: { $1 })
            var quiet = true
            for mirror in live {
                guard let entry = byID[mirror.subscription] else {
                    throw HarnessError("server.stats does not list subscription \(mirror.subscription): \(stats)")
                }
                let sent = entry["lastSentSeq"]?.int64Value
                guard sent == mirror.lastSeq else {
                    throw HarnessError("server.stats says \(mirror.subscription) was sent seq \(sent.map(String.init) ?? "?"), the mirror received \(mirror.lastSeq)")
                }
                let acked = entry["lastAckedSeq"]?.int64Value ?? -1
                if mirror.maxInFlight > 0 && acked < mirror.lastSeq {
                    quiet = false
                    mirror.ack(daemon, upTo: mirror.lastSeq, asRequest: false)
                } else if entry["pendingChats"]?.int64Value != 0 || entry["deferredPending"] != .bool(false) {
                    // Everything acked and still something pending: give it a round, then it is a bug.
                    quiet = false
                }
            }
            if quiet { return stats }
            if Date() > deadline {
                throw HarnessError("the feed did not settle within \(timeout) s; last stats \(stats)")
            }
            usleep(1_000)
        }
    }
}

/// The chat list after each write of a test (revisions ignored), in commit order.
final class MomentLog {
    private(set) var lists: [[Chat]] = []

    var count: Int { lists.count }

    func record(_ list: [Chat]) { lists.append(list) }

    /// The first moment at or after `start` whose list (or its first `limit` rows) is `rows`.
    func firstMatch(_ rows: [Chat], limit: Int?, from start: Int) -> Int? {
        guard start < lists.count else { return nil }
        for index in start..<lists.count {
            let list = lists[index]
            let expected = limit.map { list.prefix($0) } ?? list[...]
            guard expected.count == rows.count else { continue }
            if zip(expected, rows).allSatisfy({ Self.sameIgnoringRevision($0, $1) }) { return index }
        }
        return nil
    }

    static func sameIgnoringRevision(_ a: Chat, _ b: Chat) -> Bool {
        a.id == b.id && a.title == b.title && a.createdAt == b.createdAt && a.lastMessage == b.lastMessage
            && a.lastMessageDate == b.lastMessageDate && a.unread == b.unread
    }
}
