import ChatModel
import Foundation
import JSONCodec
import ListDiff
import TestSupport
import Testing
import WireProtocol

/// Random event streams through the daemon's stdin, with subscribers that mirror the feed by
/// applying every batch with the UIKit model; at quiet points every mirror equals `chats.list`,
/// and `chats.list` equals what the writes must have produced.
@Suite struct RandomStreamTests {
    /// One write sent and not yet answered.
    struct Outstanding {
        var id: JSONValue
        var method: String
        var params: JSONValue
        var expect: ClientModel.Expectation
    }

    /// One run: the subscriptions' `maxInFlight`, the seed, and a configuration (nil: the
    /// default one). A large reset threshold makes even a one-row window get batches instead of
    /// resets; tiny group commits put commits in the middle of the input a round holds.
    struct StreamCase: Sendable, CustomTestStringConvertible {
        var maxInFlight: Int
        var seed: UInt64
        var config: String?

        var testDescription: String {
            "maxInFlight \(maxInFlight), seed \(seed)" + (config.map { ", config \($0)" } ?? "")
        }

        /// The fixed seeds, plus `CHATFEED_E2E_SEEDS` more (1000, 1001, …) for a longer hunt.
        static let seeds: [UInt64] = {
            let extra = ProcessInfo.processInfo.environment["CHATFEED_E2E_SEEDS"].flatMap { UInt64($0) } ?? 0
            return [0xC0FFEE, 0xBADC0DE, 7, 2026] + (0..<extra).map { 1_000 + $0 }
        }()

        static let configs: [String?] = [
            nil,
            #"{"resetThreshold": 1000}"#,
            #"{"groupCommitMaxEvents": 2, "resetThreshold": 0.5}"#,
        ]

        static let all: [StreamCase] = [0, 1, 3].flatMap { maxInFlight in
            seeds.flatMap { seed in
                configs.enumerated().compactMap { index, config in
                    // The third configuration with half the seeds, to keep the suite short.
                    index == 2 && seed % 2 == 1 ? nil : StreamCase(maxInFlight: maxInFlight, seed: seed, config: config)
                }
            }
        }
    }

    @Test(arguments: StreamCase.all)
    func mirrorsFollowTheChatList(_ run: StreamCase) throws {
        let (maxInFlight, seed) = (run.maxInFlight, run.seed)
        let variant = UInt64(StreamCase.configs.firstIndex { $0 == run.config } ?? 0)
        var random = SeededGenerator(seed: seed &+ UInt64(maxInFlight) &* 7919 &+ variant)
        var arguments: [String] = []
        let directory = try TemporaryDirectory()
        if let json = run.config {
            let config = directory.path("config.json")
            try Data(json.utf8).write(to: URL(fileURLWithPath: config))
            arguments = ["--config", config]
        }
        let daemon = try Daemon(directory: directory, extraArguments: arguments)
        var model = ClientModel(withLists: true)
        let context = run.testDescription

        // A few chats before anyone subscribes, so that the snapshots are not empty.
        let moments = MomentLog()
        for _ in 0..<6 {
            let write = model.createChat(using: &random)
            try ClientModel.check(try daemon.request(write.method, write.params), against: write.expect, method: write.method, params: write.params)
        }
        moments.record(model.expectedViews)
        let windowLimit = Int.random(in: 4...12, using: &random)
        let archive = ChatListView(list: .archive)
        let unread = ChatListView(list: .main, unreadOnly: true)
        let archivedUnread = ChatListView(list: .archive, unreadOnly: true)
        var mirrors = [
            try FeedMirror(daemon: daemon, maxInFlight: maxInFlight, moments: moments),
            try FeedMirror(daemon: daemon, limit: windowLimit, maxInFlight: maxInFlight, moments: moments),
            try FeedMirror(daemon: daemon, limit: 1, maxInFlight: maxInFlight, moments: moments),
            try FeedMirror(daemon: daemon, view: archive, maxInFlight: maxInFlight, moments: moments),
            try FeedMirror(daemon: daemon, view: archive, limit: 3, maxInFlight: maxInFlight, moments: moments),
            try FeedMirror(daemon: daemon, view: unread, maxInFlight: maxInFlight, moments: moments),
            try FeedMirror(daemon: daemon, view: unread, limit: windowLimit, maxInFlight: maxInFlight, moments: moments),
            try FeedMirror(daemon: daemon, view: archivedUnread, maxInFlight: maxInFlight, moments: moments),
        ]

        var outstanding: [Outstanding] = []
        var ackRequests: [JSONValue] = []
        func collectReplies() throws {
            for write in outstanding {
                try ClientModel.check(try daemon.reply(to: write.id), against: write.expect, method: write.method, params: write.params)
            }
            outstanding.removeAll()
            for id in ackRequests {
                let reply = try daemon.reply(to: id)
                guard reply.result == [:] else { throw HarnessError("feed.ack answered \(reply)") }
            }
            ackRequests.removeAll()
        }
        func deliverAndAck() throws {
            for mirror in mirrors where !mirror.unsubscribed {
                try mirror.catchUp(daemon)
                guard mirror.lastSeq > mirror.lastAcked else { continue }
                let roll = Int.random(in: 0..<100, using: &random)
                let asRequest = Bool.random(using: &random)
                let seq: Int64? = switch roll {
                case ..<40: mirror.lastSeq  // all received
                case ..<55: Int64.random(in: (mirror.lastAcked + 1)...mirror.lastSeq, using: &random)  // part of it
                case ..<60: mirror.lastAcked  // again what was acked already (a no-op)
                default: nil  // not now: the feed coalesces meanwhile
                }
                if let seq, let id = mirror.ack(daemon, upTo: seq, asRequest: asRequest) { ackRequests.append(id) }
            }
        }
        func compareWithTheList(_ when: String) throws {
            try collectReplies()
            let stats = try FeedMirror.settle(mirrors, daemon: daemon)
            var views: [ChatListView: [Chat]] = [:]
            for view in ChatListView.all {
                let list = try daemon.call("chats.list", [
                    "limit": 10_000, "list": .string(view.list.rawValue), "unreadOnly": .bool(view.unreadOnly),
                ])
                let items = try (list["items"]?.arrayValue ?? []).map { try Chat(jsonValue: $0) }
                views[view] = items
                let counters = model.expectedCounters(view.list)
                #expect(list["total"]?.int64Value == Int64(counters.total), "\(context), \(when): total of \(view)")
                #expect(try UnreadCounters(jsonValue: list["unread"] ?? .null) == counters.unread, "\(context), \(when): unread of \(view)")
                #expect(items.map(ClientModel.normalized) == model.expectedList(view),
                        "\(context), \(when): chats.list of \(view) differs from what the writes produce")
                for mirror in mirrors where !mirror.unsubscribed && mirror.view == view {
                    let want = mirror.limit.map { Array(items.prefix($0)) } ?? items
                    #expect(mirror.rows == want, "\(context), \(when): mirror of \(mirror.subscription) (\(view), limit \(mirror.limit.map(String.init) ?? "none")) differs from chats.list")
                    #expect(mirror.total == Int64(counters.total) && mirror.unread == counters.unread,
                            "\(context), \(when): counts of \(mirror.subscription) (\(view)) are not live")
                }
            }
            let items = views[ChatListView(list: .main)]!
            #expect(stats["chats"]?.int64Value == Int64(model.chats.count), "\(context), \(when): \(stats)")
            #expect(stats["messages"]?.int64Value == Int64(model.liveMessageCount), "\(context), \(when): \(stats)")

            // chats.locate gives the indices of chats.list, null for an unknown id.
            let ids = items.map(\.id).shuffled(using: &random).prefix(50) + ["no-such-chat"]
            let located = try daemon.call("chats.locate", ["ids": .array(ids.map { .string($0) })])
            #expect(located["total"]?.int64Value == Int64(items.count))
            for id in ids {
                let index = items.firstIndex { $0.id == id }
                #expect(located["indices"]?[id] == (index.map { .integer($0) } ?? .null), "\(context): chats.locate \(id)")
            }
        }

        let totalWrites = 1_200
        var written = 0
        var lateJoiner: FeedMirror?
        var checkedHalfway = false
        while written < totalWrites {
            // A burst of writes sent without waiting, in chunks that cut lines anywhere.
            let burst = Bool.random(using: &random) ? 1 : Int.random(in: 2...30, using: &random)
            var bytes: [UInt8] = []
            for _ in 0..<burst {
                let write = model.randomWrite(using: &random)
                moments.record(model.expectedViews)
                let id = daemon.makeID()
                bytes += Daemon.line(id: id, method: write.method, params: write.params)
                outstanding.append(Outstanding(id: id, method: write.method, params: write.params, expect: write.expect))
            }
            var cuts = (0..<Int.random(in: 0...2, using: &random)).map { _ in Int.random(in: 0...bytes.count, using: &random) }.sorted()
            cuts.append(bytes.count)
            var start = 0
            for cut in cuts where cut > start {
                #expect(daemon.send(raw: Array(bytes[start..<cut])))
                start = cut
            }
            written += burst

            // Sometimes wait for the answers now, sometimes let them pile up.
            if Int.random(in: 0..<3, using: &random) == 0 || outstanding.count > 120 { try collectReplies() }
            try deliverAndAck()

            if lateJoiner == nil && written > totalWrites / 3 {
                // Subscribing while writes are still unanswered: the snapshot includes them.
                let joiner = try FeedMirror(daemon: daemon, maxInFlight: Int.random(in: 0...2, using: &random), moments: moments)
                lateJoiner = joiner
                mirrors.append(joiner)
            }
            if let joiner = lateJoiner, !joiner.unsubscribed, written > 2 * totalWrites / 3 {
                try joiner.unsubscribe(daemon)
            }
            if !checkedHalfway && written > totalWrites / 2 {
                checkedHalfway = true
                try compareWithTheList("halfway")
            }
        }
        try compareWithTheList("at the end")

        let full = mirrors[0]
        let summary = mirrors.map { "\($0.view) \($0.limit.map { "limit \($0)" } ?? "full"): \($0.batches) batches (\($0.structuralBatches) structural, \($0.updateBatches) updates, \($0.countOnlyBatches) counts only, \($0.moves) moves), \($0.resets) resets" }
        #expect(full.batches + full.resets > 20 && full.structuralBatches > 0 && full.updateBatches > 0,
                "\(context): the stream exercised too little: \(summary)")
        if ProcessInfo.processInfo.environment["E2E_VERBOSE"] != nil { print("\(context): \(summary); moments \(mirrors.map(\.moment)) of \(moments.count)") }
        #expect(daemon.malformed.isEmpty, "\(context): non-protocol lines on stdout: \(daemon.malformed.prefix(3))")
        #expect(try daemon.shutDown() == .exited(0), "\(context)")
    }

    /// A subscriber that never acks costs nothing per event: after many events it receives one
    /// coalesced batch (and its deferred batch) that brings it to the current list.
    @Test func aSubscriberThatNeverAcksGetsCoalescedBatches() throws {
        var random = SeededGenerator(seed: 42)
        let daemon = try Daemon()
        var model = ClientModel()
        for _ in 0..<10 { _ = try daemon.call("chat.create", model.createChat(using: &random).params) }
        let mirror = try FeedMirror(daemon: daemon, maxInFlight: 1)
        var ids: [JSONValue] = []
        for _ in 0..<300 {
            let write = model.randomWrite(using: &random)
            ids.append(daemon.post(write.method, write.params))
        }
        for id in ids { _ = try daemon.reply(to: id) }
        _ = try daemon.call("server.stats")
        try mirror.catchUp(daemon)
        #expect(mirror.lastSeq == 1, "with maxInFlight 1 and no ack, exactly one notification is sent")
        // What waits is bounded by the chats, not by the events.
        let waiting = try daemon.call("server.stats")["subscriptions"]?.arrayValue?.first?["pendingChats"]?.int64Value ?? -1
        #expect((0...Int64(model.chats.count + model.removedCount)).contains(waiting), "\(waiting) chats pending after 300 events")
        let stats = try FeedMirror.settle([mirror], daemon: daemon)
        #expect(mirror.lastSeq <= 4, "300 events coalesced into \(mirror.lastSeq) notifications")
        let items = try (daemon.call("chats.list", ["limit": 10_000])["items"]?.arrayValue ?? []).map { try Chat(jsonValue: $0) }
        #expect(mirror.rows == items)
        #expect(stats["subscriptions"]?.arrayValue?.first?["pendingChats"] == 0)
        #expect(try daemon.shutDown() == .exited(0))
    }
}
