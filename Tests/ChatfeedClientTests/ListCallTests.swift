import ChatfeedClient
import ChatModel
import JSONCodec
import Testing
import TestSupport
import WireProtocol

/// The calls of lists, pins and mute, and the counters, against a scripted engine: what the client
/// sends and how it reads the answers.
@Suite(.hangGuard) struct ListCallTests {
    static let unreadJSON = #"{"chats":2,"messages":7,"unmutedChats":1,"unmutedMessages":3}"#
    static let unread = UnreadCounters(chats: 2, messages: 7, unmutedChats: 1, unmutedMessages: 3)

    @Test func pinArchiveAndMuteCallsSendTheirMethodAndReadTheChat() async throws {
        let scripted = try await ScriptedClient()
        let (client, engine) = (scripted.client, scripted.engine)
        let calls: [(String, @Sendable (ChatClient) async throws -> Chat)] = [
            ("chat.pin", { try await $0.pinChat("a") }),
            ("chat.unpin", { try await $0.unpinChat("a") }),
            ("chat.archive", { try await $0.archiveChat("a") }),
            ("chat.unarchive", { try await $0.unarchiveChat("a") }),
            ("chat.mute", { try await $0.muteChat("a") }),
            ("chat.unmute", { try await $0.unmuteChat("a") }),
        ]
        for (revision, (method, call)) in calls.enumerated() {
            let answer = Task { try await call(client) }
            let request = try await engine.answer(method, result: chatJSON("a", revision: revision + 2))
            #expect(request["params"] == ["chat": "a"], "\(method)")
            #expect(try await answer.value.revision == Int64(revision + 2), "\(method)")
        }
        let setPinned = Task { try await client.setPinnedChats(["b", "a"], in: .archive) }
        let request = try await engine.answer("chat.setPinned", result: "{}")
        #expect(request["params"] == ["list": "archive", "chats": ["b", "a"]])
        try await setPinned.value

        let refused = Task { try await client.pinChat("f") }
        let pin = try await engine.next()
        engine.push(#"{"jsonrpc":"2.0","id":\#(pin["id"]!),"error":{"code":-32002,"message":"the main list already has 5 pinned chats (maxPinnedChats)"}}"#)
        do {
            _ = try await refused.value
            Issue.record("the refused pin returned a chat")
        } catch let error as ChatfeedError {
            #expect(error.code == .conflict && error.method == "chat.pin")
        }
        await client.close()
    }

    @Test func listAndLocateTakeTheListAndUnreadOnlyAndReadTheCounters() async throws {
        let scripted = try await ScriptedClient()
        let (client, engine) = (scripted.client, scripted.engine)
        let page = Task { try await client.listChats(list: .archive, unreadOnly: true, limit: 5) }
        let request = try await engine.answer(
            "chats.list", result: #"{"total":9,"unread":\#(Self.unreadJSON),"items":[\#(chatJSON("a"))]}"#)
        #expect(request["params"] == ["offset": 0, "limit": 5, "list": "archive", "unreadOnly": true])
        #expect(try await page.value == ChatPage(total: 9, unread: Self.unread, items: [try chat("a")]))

        let plain = Task { try await client.listChats() }
        #expect(try await engine.answer("chats.list", result: #"{"total":0,"unread":\#(Self.unreadJSON),"items":[]}"#)["params"]
            == ["offset": 0, "limit": 100])
        #expect(try await plain.value.unread == Self.unread)

        let located = Task { try await client.locateChats(["a", "b"], in: .archive) }
        let locate = try await engine.answer("chats.locate", result: #"{"total":9,"indices":{"a":4,"b":null}}"#)
        #expect(locate["params"] == ["ids": ["a", "b"], "list": "archive"])
        #expect(try await located.value == ChatLocations(total: 9, indices: ["a": 4]))
        await client.close()
    }

    @Test func statsReadEverySubscription() async throws {
        let scripted = try await ScriptedClient()
        let (client, engine) = (scripted.client, scripted.engine)
        let stats = Task { try await client.stats() }
        try await engine.answer("server.stats", result: #"""
            {"chats":3,"messages":10,"latestChangeSequence":42,"uptimeMs":1500,"subscriptions":[
             {"subscription":"s1","list":"archive","unreadOnly":true,"limit":null,"maxInFlight":1,"lastSentSeq":4,
              "lastAckedSeq":3,"pendingChats":2,"deferredPending":false,"resetPending":true}]}
            """#)
        let answer = try await stats.value
        #expect(answer.chats == 3 && answer.messages == 10 && answer.latestChangeSequence == 42 && answer.uptimeMilliseconds == 1500)
        let subscription = try #require(answer.subscriptions.first)
        #expect(subscription.subscription == "s1" && subscription.list == .archive && subscription.unreadOnly)
        #expect(subscription.limit == nil && subscription.maxInFlight == 1 && subscription.pendingChats == 2)
        #expect(subscription.lastSentSeq == 4 && subscription.lastAckedSeq == 3)
        #expect(!subscription.deferredPending && subscription.resetPending)

        let broken = Task { try await client.stats() }
        try await engine.answer("server.stats", result: #"""
            {"chats":3,"messages":10,"latestChangeSequence":42,"uptimeMs":1,"subscriptions":[{"subscription":"s1"}]}
            """#)
        await #expect(throws: ChatfeedClientError.self) { try await broken.value }
        await client.close()
    }

    @Test func aSubscriptionSeesItsListAndEveryUpdateCarriesTheCounters() async throws {
        let scripted = try await ScriptedClient()
        let (client, engine) = (scripted.client, scripted.engine)
        let subscribing = Task { try await client.subscribe(SubscriptionOptions(list: .archive, unreadOnly: true, limit: 3)) }
        let request = try await engine.answer(
            "feed.subscribe",
            result: #"{"subscription":"s1","seq":0,"count":1,"total":5,"unread":\#(Self.unreadJSON),"items":[\#(chatJSON("a"))]}"#)
        #expect(request["params"] == ["list": "archive", "unreadOnly": true, "limit": 3, "maxInFlight": 1])
        let subscription = try await subscribing.value
        var iterator = subscription.makeAsyncIterator()
        let snapshot = try #require(try await iterator.next())
        #expect(snapshot.kind == .snapshot && snapshot.count == 1 && snapshot.total == 5 && snapshot.unread == Self.unread)

        // Only the counters changed (a muted chat got a message): no steps, new counters.
        engine.push(feedBatchLine(seq: 1, count: 1, total: 6, unread: #"{"chats":2,"messages":8,"unmutedChats":1,"unmutedMessages":3}"#))
        let countsOnly = try #require(try await iterator.next())
        #expect(countsOnly.steps.isEmpty && countsOnly.total == 6 && countsOnly.unread.messages == 8 && countsOnly.count == 1)
        await subscription.acknowledge(countsOnly)

        engine.push(feedBatchLine(
            seq: 2, count: 2, total: 6, unread: #"{"chats":3,"messages":9,"unmutedChats":2,"unmutedMessages":4}"#,
            inserts: #"[{"index":0,"chat":\#(chatJSON("b"))}]"#))
        let inserted = try #require(try await iterator.next())
        #expect(inserted.chats.map(\.id) == ["b", "a"] && inserted.unread.unmutedMessages == 4)

        engine.push(feedResetLine(seq: 3, total: 2))
        let reset = try #require(try await iterator.next())
        #expect(reset.kind == .reset && reset.total == 2 && reset.unread == UnreadCounters())
        await client.close()
    }

    @Test func aSubscriptionResumingFromSavedRowsSendsThemAndAnimatesTheCatchUp() async throws {
        let scripted = try await ScriptedClient()
        let (client, engine) = (scripted.client, scripted.engine)
        let saved = [try chat("a"), try chat("b"), try chat("a", revision: 5)]
        let subscribing = Task { try await client.subscribe(SubscriptionOptions(limit: 5), resumingFrom: saved) }
        let request = try await engine.next()
        #expect(request["params"]?["known"] == [["id": "a", "revision": 1], ["id": "b", "revision": 1]], "a repeated id is dropped")
        engine.push(#"{"jsonrpc":"2.0","id":\#(request["id"]!),"result":{"subscription":"s1","seq":0,"count":2,"total":2,"unread":\#(Self.unreadJSON),"batches":[{"deletes":[],"inserts":[],"moves":[{"from":1,"to":0}],"updates":[]}]}}"#)
        let subscription = try await subscribing.value
        var iterator = subscription.makeAsyncIterator()
        let update = try #require(try await iterator.next())
        #expect(update.kind == .batches && update.seq == 0 && update.steps.count == 1)
        #expect(update.chats.map(\.id) == ["b", "a"] && update.unread == Self.unread)
        await client.close()
    }

    @Test func aResumeWhoseBatchesMissTheAnnouncedCountIsRefused() async throws {
        let scripted = try await ScriptedClient()
        let (client, engine) = (scripted.client, scripted.engine)
        let subscribing = Task { try await client.subscribe(resumingFrom: [try chat("a")]) }
        try await engine.answer(
            "feed.subscribe",
            result: #"{"subscription":"s1","seq":0,"count":2,"total":2,"batches":[{"deletes":[],"inserts":[],"moves":[],"updates":[]}]}"#)
        // Refused: the engine's subscription is ended, and the list asked for instead.
        #expect(try await engine.next() == ["jsonrpc": "2.0", "method": "feed.unsubscribe", "params": ["subscription": "s1"]])
        let plain = try await engine.answer(
            "feed.subscribe", result: #"{"subscription":"s2","seq":0,"count":2,"total":2,"items":[\#(chatJSON("a")),\#(chatJSON("b"))]}"#)
        #expect(plain["params"]?["known"] == nil)
        var updates = try await subscribing.value.makeAsyncIterator()
        let first = try #require(try await updates.next())
        #expect(first.kind == .snapshot && first.chats.map(\.id) == ["a", "b"])
        await client.close()
    }
}

func chat(_ id: String, revision: Int = 1) throws -> Chat {
    try Chat(jsonValue: try JSONValue(parsing: Array(chatJSON(id, revision: revision).utf8)), field: "chat")
}
