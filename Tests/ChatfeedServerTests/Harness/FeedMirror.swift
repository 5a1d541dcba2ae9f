import ChatModel
import Foundation
import JSONCodec
import ListDiff
import TestSupport
import WireProtocol

/// A subscriber's copy of its chat list, kept only by applying what the daemon sends: every
/// `feed.batch` through `UIKitBatchModel.apply` (the UIKit rules), every `feed.reset` by
/// replacement. It checks the feed's promises on the way:
/// - `seq` starts at 1 and has no gaps; never more than `maxInFlight` unacknowledged;
/// - `count` is the mirror's size, `min(limit, total)` for a whole list; an empty batch carries
///   counts that differ from the previous notification's;
/// - ids are unique; after a pure-update batch or a reset the mirror is in chat-list order
///   (a moment of the list);
/// - a row moved by a structural batch is updated, with another order key (pin order or
///   `lastMessageDate`), by the deferred batch that immediately follows (only chats whose order
///   key changed may move);
/// - with a `MomentLog`: the snapshot, the list before each structural batch, and the list after
///   each pure-update batch and reset are the chat list at one moment of the commit order, and
///   those moments never go back.
final class FeedMirror {
    let subscription: String
    let view: ChatListView
    let limit: Int?
    let maxInFlight: Int
    private(set) var rows: [Chat]
    private(set) var lastSeq: Int64 = 0
    /// The highest seq this client has acknowledged.
    private(set) var lastAcked: Int64 = 0
    /// Next notification of the daemon's log to look at.
    private var cursor: Int
    /// Ids moved by the last structural batch, with their order key before it.
    private var movedAwaitingUpdate: [String: ChatOrderKey] = [:]
    /// `total` and `unread` of the latest notification (of the snapshot before any).
    private(set) var total: Int64 = 0
    private(set) var unread = UnreadCounters()
    private(set) var batches = 0
    private(set) var structuralBatches = 0
    private(set) var updateBatches = 0
    private(set) var resets = 0
    private(set) var moves = 0
    /// Empty batches: only the counts changed.
    private(set) var countOnlyBatches = 0
    /// Set once `feed.unsubscribe` answered: no notification may follow.
    private(set) var unsubscribed = false
    /// The lists after each write, when the test knows them.
    private let moments: MomentLog?
    /// The earliest moment the mirror may show next.
    private(set) var moment = 0

    /// Subscribes and takes the snapshot. The notification cursor is taken before the request,
    /// so that notifications that follow the response at once are not missed.
    init(
        daemon: Daemon, view: ChatListView = ChatListView(list: .main), limit: Int? = nil, maxInFlight: Int,
        moments: MomentLog? = nil
    ) throws {
        self.moments = moments
        self.view = view
        cursor = daemon.notificationCount
        var params: JSONObject = ["maxInFlight": .integer(maxInFlight)]
        if let limit { params.append("limit", .integer(limit)) }
        if view.list != .main { params.append("list", .string(view.list.rawValue)) }
        if view.unreadOnly { params.append("unreadOnly", true) }
        let result = try daemon.call("feed.subscribe", .object(params))
        guard let subscription = result["subscription"]?.stringValue, result["seq"]?.int64Value == 0,
              let total = result["total"]?.int64Value, let items = result["items"]?.arrayValue
        else { throw HarnessError("bad feed.subscribe result \(result)") }
        self.subscription = subscription
        self.limit = limit
        self.maxInFlight = maxInFlight
        rows = try items.map { try Chat(jsonValue: $0) }
        self.total = total
        unread = try UnreadCounters(jsonValue: result["unread"] ?? .null)
        guard result["count"]?.int64Value == Int64(rows.count) else { throw HarnessError("bad count in \(result)") }
        let expected = limit.map { min($0, Int(total)) } ?? Int(total)
        guard view.unreadOnly ? rows.count <= expected : rows.count == expected else {
            throw HarnessError("snapshot of \(subscription) has \(rows.count) rows for total \(total), limit \(limit.map(String.init) ?? "none")")
        }
        try checkOrder("the snapshot")
        try checkMoment("the snapshot")
    }

    /// The mirror is the list (or its window) after some write at or after `moment`.
    func checkMoment(_ context: String) throws {
        guard let moments else { return }
        guard let found = moments.firstMatch(rows, view: view, limit: limit, from: moment) else {
            throw fail("\(context) is not the \(view) list at any moment from write \(moment) on (of \(moments.count)): \(rows.map(\.id))")
        }
        moment = found
    }

    private func fail(_ message: String) -> HarnessError {
        HarnessError("subscription \(subscription) (\(view), limit \(limit.map(String.init) ?? "none"), maxInFlight \(maxInFlight)) after seq \(lastSeq): \(message)")
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
            let batch = try FeedBatchParams(jsonValue: params).batch
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
                    guard chat.orderKey != oldDate else {
                        throw fail("chat \(id) moved in batch \(seq - 1) though its order key \(oldDate) did not change")
                    }
                }
                movedAwaitingUpdate = [:]
            }
            if batch.isStructural {
                structuralBatches += 1
                moves += batch.moves.count
                for move in batch.moves { movedAwaitingUpdate[before[move.from].id] = before[move.from].orderKey }
            } else {
                updateBatches += 1
                if batch.updates.isEmpty {
                    countOnlyBatches += 1
                    let newUnread = try UnreadCounters(jsonValue: params["unread"] ?? .null)
                    guard count != Int64(before.count) || total != self.total || newUnread != unread else {
                        throw fail("batch \(seq) is empty and its counts did not change")
                    }
                }
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
        guard view.unreadOnly ? count <= expected : count == expected else { throw fail("\(method) \(seq): count \(count) with total \(total)") }
        self.total = total
        unread = try UnreadCounters(jsonValue: params["unread"] ?? .null)
        var seen = Set<String>()
        for row in rows where !seen.insert(row.id).inserted { throw fail("chat \(row.id) twice after \(method) \(seq)") }
    }

    /// The rows are in list order: pin order descending, then `lastMessageDate` descending, then
    /// id ascending bytewise.
    func checkOrder(_ context: String) throws {
        for (a, b) in zip(rows, rows.dropFirst()) where !Self.precedes(a, b) {
            throw fail("after \(context), \(a.id) (\(a.orderKey)) comes before \(b.id) (\(b.orderKey))")
        }
        for row in rows where !view.contains(row) { throw fail("after \(context), \(row.id) is not a row of \(view)") }
    }

    static func precedes(_ a: Chat, _ b: Chat) -> Bool {
        if a.pinOrder != b.pinOrder { return a.pinOrder > b.pinOrder }
        if a.lastMessageDate != b.lastMessageDate { return a.lastMessageDate > b.lastMessageDate }
        return Array(a.id.utf8).lexicographicallyPrecedes(Array(b.id.utf8))
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

/// Every view's rows after each write of a test (revisions ignored), in commit order.
final class MomentLog {
    private(set) var lists: [[ChatListView: [Chat]]] = []

    var count: Int { lists.count }

    /// Records a moment of `main` only.
    func record(_ list: [Chat]) { lists.append([ChatListView(list: .main): list]) }

    func record(_ views: [ChatListView: [Chat]]) { lists.append(views) }

    /// The first moment at or after `start` whose `view` (or its first `limit` rows) is `rows`.
    func firstMatch(_ rows: [Chat], view: ChatListView, limit: Int?, from start: Int) -> Int? {
        guard start < lists.count else { return nil }
        for index in start..<lists.count {
            guard let list = lists[index][view] else { continue }
            let expected = limit.map { list.prefix($0) } ?? list[...]
            guard expected.count == rows.count else { continue }
            if zip(expected, rows).allSatisfy({ Self.sameIgnoringRevision($0, $1) }) { return index }
        }
        return nil
    }

    static func sameIgnoringRevision(_ a: Chat, _ b: Chat) -> Bool {
        a.id == b.id && a.title == b.title && a.createdAt == b.createdAt && a.lastMessage == b.lastMessage
            && a.lastMessageDate == b.lastMessageDate && a.unread == b.unread && a.list == b.list
            && a.pinned == b.pinned && a.muted == b.muted
    }
}
