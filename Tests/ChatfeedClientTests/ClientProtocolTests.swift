import ChatfeedClient
import ChatModel
import ListDiff
import Testing
import TestSupport
import WireProtocol

/// The client against a scripted engine: what it sends, how it reads answers, how it checks the feed.
@Suite(.hangGuard) struct ClientProtocolTests {
    @Test func anErrorAnswerIsATypedErrorWithCodeMessageAndField() async throws {
        let scripted = try await ScriptedClient()
        let (client, engine) = (scripted.client, scripted.engine)
        let created = Task { try await client.createChat("a", title: "") }
        let request = try await engine.next()
        #expect(request["method"] == "chat.create")
        #expect(request["params"] == ["chat": "a", "title": ""])
        engine.push(#"{"jsonrpc":"2.0","id":\#(request["id"]!),"error":{"code":-32602,"message":"title must not be empty","data":{"field":"title"}}}"#)
        await #expect(throws: ChatfeedError(
            code: .invalidParams, message: "title must not be empty", field: "title", data: ["field": "title"],
            method: "chat.create")) { try await created.value }
        await client.close()
    }

    @Test func typedResultsAreRead() async throws {
        let scripted = try await ScriptedClient()
        let (client, engine) = (scripted.client, scripted.engine)
        let page = Task { try await client.listChats(limit: 2) }
        try await engine.answer("chats.list", result: #"{"total":3,"items":[\#(chatJSON("a")),\#(chatJSON("b"))]}"#)
        #expect(try await page.value.total == 3)
        #expect(try await page.value.items.map(\.id) == ["a", "b"])
        let located = Task { try await client.locateChats(["a", "zz"]) }
        try await engine.answer("chats.locate", result: #"{"total":3,"indices":{"a":0,"zz":null}}"#)
        #expect(try await located.value.indices == ["a": 0])
        let posted = Task { try await client.postMessage(chat: "a", id: "m", sender: "s", text: "t", sentAt: 5) }
        try await engine.answer("message.post", result: #"{"duplicate":true}"#)
        #expect(try await posted.value.duplicate)
        await client.close()
    }

    @Test func aSeqGapEndsTheSequenceWithAnErrorThatNamesIt() async throws {
        let scripted = try await ScriptedClient()
        let (subscription, _) = try await scripted.subscribe(items: [chatJSON("a")])
        scripted.engine.push(feedBatchLine(seq: 2, count: 1))
        var iterator = subscription.makeAsyncIterator()
        #expect(try await iterator.next()?.kind == .snapshot)
        await #expect(throws: FeedError.seqGap(subscription: "s1", expected: 1, received: 2)) { try await iterator.next() }
        // The client unsubscribes what it cannot follow.
        #expect(try await scripted.engine.next()["method"] == "feed.unsubscribe")
        await scripted.client.close()
    }

    @Test func aBatchUIKitWouldRefuseEndsTheSequence() async throws {
        let scripted = try await ScriptedClient()
        let (subscription, _) = try await scripted.subscribe(items: [chatJSON("a")])
        // Row 0 moved and updated in one batch: "attempt to delete and reload the same index path".
        scripted.engine.push(feedBatchLine(
            seq: 1, count: 1, moves: #"[{"from":0,"to":0}]"#, updates: #"[{"index":0,"chat":\#(chatJSON("a", revision: 2))}]"#))
        var iterator = subscription.makeAsyncIterator()
        _ = try await iterator.next()
        do {
            _ = try await iterator.next()
            Issue.record("the batch was accepted")
        } catch let FeedError.invalidBatch(subscription, seq, violation) {
            #expect(subscription == "s1" && seq == 1 && violation.rule == .moveAndUpdate)
        }
        await scripted.client.close()
    }

    @Test func anUpdateOfAnotherChatThanTheMirrorsRowIsRefused() async throws {
        let scripted = try await ScriptedClient()
        let (subscription, _) = try await scripted.subscribe(items: [chatJSON("a"), chatJSON("b")])
        scripted.engine.push(feedBatchLine(seq: 1, count: 2, updates: #"[{"index":0,"chat":\#(chatJSON("b", revision: 2))}]"#))
        var iterator = subscription.makeAsyncIterator()
        _ = try await iterator.next()
        await #expect(throws: FeedError.updateOfAnotherRow(subscription: "s1", seq: 1, index: 0, mirrored: "a", received: "b")) {
            try await iterator.next()
        }
        await scripted.client.close()
    }

    @Test(arguments: [AcknowledgementMode.manual, .onNext])
    func manualModeAcksWhenTheAppSaysAndOnNextModeWhenTheNextIsAsked(mode: AcknowledgementMode) async throws {
        let scripted = try await ScriptedClient()
        let engine = scripted.engine
        let (subscription, request) = try await scripted.subscribe(acknowledgement: mode, items: [])
        #expect(request["params"]?["maxInFlight"] == 1)
        engine.push(feedBatchLine(seq: 1, count: 1, inserts: #"[{"index":0,"chat":\#(chatJSON("a"))}]"#))
        var iterator = subscription.makeAsyncIterator()
        #expect(try await iterator.next()?.chats == [])
        let update = try #require(try await iterator.next())
        #expect(update.kind == .batches && update.seq == 1 && update.chats.map(\.id) == ["a"])
        #expect(update.steps.map(\.batch.inserts.count) == [1])
        try await Task.sleep(for: .milliseconds(50))
        #expect(engine.pending().isEmpty, "nothing is acknowledged before the app applied the update")
        if mode == .manual {
            await subscription.acknowledge(update)
            await subscription.acknowledge(update)
        } else {
            engine.push(feedResetLine(seq: 2))
            #expect(try await iterator.next()?.kind == .reset)
        }
        let ack = try await engine.next()
        #expect(ack["method"] == "feed.ack" && ack["id"] == nil)
        #expect(ack["params"] == ["subscription": "s1", "seq": 1])
        try await Task.sleep(for: .milliseconds(30))
        #expect(engine.pending().isEmpty, "one acknowledgement per update")
        await scripted.client.close()
    }

    @Test func aCatchUpThatDoesNotFitTheRowsIsUnsubscribedAndTheListAskedInstead() async throws {
        let scripted = try await ScriptedClient()
        let (client, engine) = (scripted.client, scripted.engine)
        let subscribing = Task { try await client.subscribe(resumingFrom: [try chat("a"), try chat("b")]) }
        let resume = try await engine.next()
        #expect(resume["params"]?["known"] == [["id": "a", "revision": 1], ["id": "b", "revision": 1]])
        // An update of row 1 that carries another chat than the client's row 1.
        engine.push(#"{"jsonrpc":"2.0","id":\#(resume["id"]!),"result":{"subscription":"s4","seq":0,"count":2,"total":2,"batches":[{"deletes":[],"inserts":[],"moves":[],"updates":[{"index":1,"chat":\#(chatJSON("z", revision: 2))}]}]}}"#)
        let unsubscribe = try await engine.next()
        #expect(unsubscribe["method"] == "feed.unsubscribe" && unsubscribe["params"] == ["subscription": "s4"])
        let plain = try await engine.answer("feed.subscribe", result: subscribeResult("s5", items: [chatJSON("b", revision: 3)]))
        #expect(plain["params"]?["known"] == nil)
        let subscription = try await subscribing.value
        var updates = subscription.makeAsyncIterator()
        let first = try #require(try await updates.next())
        #expect(first.kind == .snapshot && first.chats.map(\.id) == ["b"])
        // The sequence follows the replacement, and acknowledges to it.
        engine.push(feedBatchLine("s5", seq: 1, count: 1))
        let next = try #require(try await updates.next())
        await subscription.acknowledge(next)
        #expect(try await engine.next()["params"] == ["subscription": "s5", "seq": 1])
        await client.close()
    }

    @Test func anUnreadableSubscribeAnswerIsUnsubscribedWhenItNamesTheSubscription() async throws {
        let scripted = try await ScriptedClient()
        let (client, engine) = (scripted.client, scripted.engine)
        let subscribing = Task { try await client.subscribe() }
        try await engine.answer("feed.subscribe", result: #"{"subscription":"s2","seq":0,"total":1,"items":7}"#)
        await #expect(throws: ChatfeedClientError.self) { try await subscribing.value }
        let unsubscribe = try await engine.next()
        #expect(unsubscribe["method"] == "feed.unsubscribe" && unsubscribe["params"] == ["subscription": "s2"])
        // Batches answer only a subscribe that sent rows.
        let plain = Task { try await client.subscribe() }
        try await engine.answer("feed.subscribe", result: #"{"subscription":"s3","seq":0,"count":0,"total":0,"batches":[]}"#)
        await #expect(throws: ChatfeedClientError.self) { try await plain.value }
        #expect(try await engine.next()["params"] == ["subscription": "s3"])
        await client.close()
    }

    /// The next engine numbers its subscriptions again: an id of the connection that ended may now
    /// be another subscription's, which a failed resubscribe must not unsubscribe.
    @Test func aFailedResubscribeAfterARestartUnsubscribesNoneOfTheNewEnginesSubscriptions() async throws {
        let scripted = try await ScriptedClient()
        var iterators: [FeedSubscription.Iterator] = []
        for (id, chat) in [("s1", "a"), ("s2", "b")] {
            iterators.append(try await scripted.subscribe(as: id, items: [chatJSON(chat)]).subscription.makeAsyncIterator())
            _ = try await iterators[iterators.count - 1].next()
        }
        scripted.engine.end()
        let second = try await scripted.transport.connection(1)
        try await second.answer("feed.subscribe", result: #"{"subscription":"s2","seq":0,"count":1,"total":1,"batches":[]}"#)
        let refused = try await second.next()
        second.push(#"{"jsonrpc":"2.0","id":\#(refused["id"]!),"error":{"code":-32603,"message":"disk I/O error"}}"#)
        await #expect(throws: FeedError.self) { try await iterators[1].next() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(second.pending().isEmpty, "nothing sent for the failed one: \(second.pending())")
        #expect(try await iterators[0].next()?.seq == 0)
        await scripted.client.close()
    }

    @Test(arguments: [true, false])
    func afterARestartTheClientResubscribesWithItsRowsOrWithASnapshot(engineTakesKnown: Bool) async throws {
        let scripted = try await ScriptedClient()
        let (subscription, _) = try await scripted.subscribe(SubscriptionOptions(limit: 10), items: [chatJSON("a"), chatJSON("b")])
        var iterator = subscription.makeAsyncIterator()
        _ = try await iterator.next()
        scripted.engine.end()

        let second = try await scripted.transport.connection(1)
        let request = try await second.next()
        #expect(request["method"] == "feed.subscribe")
        #expect(request["params"]?["limit"] == 10)
        #expect(request["params"]?["known"] == [["id": "a", "revision": 1], ["id": "b", "revision": 1]])
        if engineTakesKnown {
            second.push(#"{"jsonrpc":"2.0","id":\#(request["id"]!),"result":{"subscription":"s9","seq":0,"total":2,"batches":[{"deletes":[],"inserts":[],"moves":[{"from":1,"to":0}],"updates":[]},{"deletes":[],"inserts":[],"moves":[],"updates":[{"index":0,"chat":\#(chatJSON("b", revision: 2, date: 2000))}]}]}}"#)
            let update = try #require(try await iterator.next())
            #expect(update.kind == .batches && update.steps.count == 2)
            #expect(update.steps[0].chats.map(\.revision) == [1, 1] && update.steps[0].chats.map(\.id) == ["b", "a"])
            #expect(update.chats.map(\.id) == ["b", "a"] && update.chats[0].revision == 2)
        } else {
            second.push(#"{"jsonrpc":"2.0","id":\#(request["id"]!),"error":{"code":-32602,"message":"known is not a parameter of feed.subscribe","data":{"field":"known"}}}"#)
            try await second.answer("feed.subscribe", result: subscribeResult("s9", items: [chatJSON("a")]))
            let update = try #require(try await iterator.next())
            #expect(update.kind == .snapshot && update.chats.map(\.id) == ["a"])
        }
        // The sequence goes on with the new subscription's notifications.
        second.push(feedResetLine("s9", seq: 1))
        #expect(try await iterator.next()?.kind == .reset)
        await scripted.client.close()
        #expect(try await iterator.next() == nil)
    }
}
