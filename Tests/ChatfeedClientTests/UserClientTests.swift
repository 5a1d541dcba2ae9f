import ChatfeedClient
import ChatfeedEngine
import ChatModel
import JSONCodec
import Testing
import TestSupport
import WireProtocol

/// Users through the client (docs/PROTOCOL.md, Users and sessions): the typed calls of users and
/// memberships, and a client bound to a user, whose every per-user call acts as that user.
@Suite(.hangGuard) struct UserClientTests {
    @Test func aBoundClientSendsItsUserOnEveryPerUserCallOnly() async throws {
        let transport = ScriptedTransport()
        let client = try await ChatClient(transport: transport, user: "ann")
        let engine = try await transport.connection(0)
        let calls: [(String, @Sendable (ChatClient) async throws -> Void)] = [
            ("chats.list", { _ = try await $0.listChats() }),
            ("chat.markRead", { _ = try await $0.markChatRead("a") }),
            ("chat.members", { _ = try await $0.members(of: "a") }),
            ("server.stats", { _ = try await $0.stats() }),
            ("user.create", { _ = try await $0.createUser("bob", createdAt: 3) }),
        ]
        let results = [
            #"{"total":0,"items":[]}"#, chatJSON("a", revision: 2), #"{"members":["ann"]}"#,
            #"{"chats":0,"messages":0,"latestChangeSequence":0,"uptimeMs":1,"subscriptions":[]}"#,
            #"{"id":"bob","name":"bob","createdAt":3}"#,
        ]
        for ((method, call), result) in zip(calls, results) {
            let answer = Task { try await call(client) }
            let request = try await engine.answer(method, result: result)
            let user = request["params"]?["user"]
            switch method {
            case "server.stats": #expect(user == nil)
            case "user.create": #expect(user == "bob")  // the user it creates, not the acting user
            default: #expect(user == "ann", "\(method)")
            }
            try await answer.value
        }
        await client.close()
    }

    @Test func usersMembershipsAndABoundClientOverAnEngine() async throws {
        let directory = try TemporaryDirectory()
        let engine = try ChatEngine(options: EngineOptions(databasePath: directory.path("users.sqlite")))
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = try await ChatClient(transport: InProcessTransport(engine: engine))
        #expect(try await backend.createUser("ann", name: "Ann", createdAt: 7) == User(id: "ann", name: "Ann", createdAt: 7))
        try await backend.createUser("bob", createdAt: 8)
        try await backend.createChat("team", title: "Team", createdAt: 10, members: ["ann", "bob"])
        try await backend.addMembers(["me"], to: "team")
        #expect(try await backend.members(of: "team") == ["ann", "bob", "me"])
        try await backend.removeMembers(["me"], from: "team")
        #expect(try await backend.members(of: "team") == ["ann", "bob"])

        let ann = try await ChatClient(transport: InProcessTransport(engine: engine), user: "ann")
        let bob = try await ChatClient(transport: InProcessTransport(engine: engine), user: "bob")
        #expect(try await ann.listChats().items.map(\.id) == ["team"])
        #expect(try await backend.listChats().items.isEmpty)  // me left
        var annFeed = try await ann.subscribe(SubscriptionOptions(maxInFlight: 0), acknowledgement: .onNext).makeAsyncIterator()
        let first = try #require(try await annFeed.next())
        #expect(first.chats.map(\.id) == ["team"])
        try await bob.postMessage(chat: "team", id: "m1", sender: "bob", text: "hi", sentAt: 20)
        let posted = try #require(try await annFeed.next())
        #expect(posted.unread.messages == 1)
        #expect(try await bob.listChats().unread.messages == 0)  // the sender's own post is read
        // A bound client's per-member writes change its user's row alone.
        let read = try await ann.markChatRead("team")
        #expect(read.unread == 0)
        #expect(try await ann.pinChat("team").pinned)
        #expect(try await bob.listChats().items.first?.pinned == false)
        // A user who does not exist: not found.
        let ghost = try await ChatClient(transport: InProcessTransport(engine: engine), user: "ghost")
        await #expect(throws: ChatfeedError.self) { _ = try await ghost.listChats() }
        for client in [backend, ann, bob, ghost] { await client.close() }
    }
}
