import ChatfeedEngine
import ChatStore
import Foundation
import Synchronization
import JSONCodec
import Testing
import TestSupport
import WireProtocol

/// Every request acts as a user (docs/PROTOCOL.md, Users and sessions): a trusted session names
/// them with `user` (default `defaultUser`), a user session is its user and may name no other.
@Suite(.serialized) struct ActingUserTests {
    private static func engine(_ directory: TemporaryDirectory, defaultUser: String = "me") throws -> ChatEngine {
        try ChatEngine(options: EngineOptions(databasePath: directory.path("users.sqlite"), defaultUser: defaultUser))
    }

    @Test func aTrustedSessionActsAsTheNamedUserOrTheDefault() async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = SessionClient(engine.openInProcessSession())
        let ann = try await backend.result("user.create", ["user": "ann", "name": "Ann", "createdAt": 5])
        #expect(ann == ["id": "ann", "name": "Ann", "createdAt": 5])
        // Without `user`: me alone; with `user`: that user alone.
        _ = try await backend.result("chat.create", ["chat": "mine", "title": "Mine", "createdAt": 1])
        _ = try await backend.result("chat.create", ["chat": "hers", "title": "Hers", "createdAt": 2, "user": "ann"])
        #expect(try await backend.result("chat.members", ["chat": "mine"]) == ["members": ["me"]])
        #expect(try await backend.result("chat.members", ["chat": "hers"]) == ["members": ["ann"]])
        let annList = try await backend.result("chats.list", ["user": "ann"])
        #expect(annList["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["hers"])
        let myList = try await backend.result("chats.list")
        #expect(myList["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["mine"])
        // A user who does not exist is not found, naming them; nothing changes.
        let ghost = try await backend.call("chat.create", ["chat": "g", "title": "G", "user": "ghost"])
        #expect(ghost["error"]?["code"] == .integer(-32001))
        #expect(ghost["error"]?["message"]?.stringValue?.contains("'ghost'") == true)
        let missing = try await backend.call("chat.members", ["chat": "g"])
        #expect(missing["error"]?["code"] == .integer(-32001))
        let badUser = try await backend.call("chats.list", ["user": 5])
        #expect(badUser["error"]?["data"]?["field"] == "user")
    }

    @Test func aUserSessionActsAsItsUserOnly() async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = SessionClient(engine.openInProcessSession())
        _ = try await backend.result("user.create", ["user": "bob"])
        _ = try await backend.result("chat.create", ["chat": "c", "title": "C", "createdAt": 1, "members": ["me", "bob"]])
        let bob = SessionClient(engine.openInProcessSession(identity: .user("bob")))
        // Its own user, named or not.
        _ = try await bob.result("chat.pin", ["chat": "c"])
        _ = try await bob.result("chat.mute", ["chat": "c", "user": "bob"])
        // Another user: forbidden, and nothing changes.
        let asMe = try await bob.call("chat.archive", ["chat": "c", "user": "me"])
        #expect(asMe["error"]?["code"] == .integer(-32007))
        #expect(asMe["error"]?["data"]?["right"] == "act as another user")
        let mine = try await backend.result("chats.list")
        #expect(mine["items"]?.arrayValue?.first?["list"] == "main")
        #expect(mine["items"]?.arrayValue?.first?["pinned"] == false)
        let bobs = try await backend.result("chats.list", ["user": "bob"])
        #expect(bobs["items"]?.arrayValue?.first?["pinned"] == true)
        #expect(bobs["items"]?.arrayValue?.first?["muted"] == true)
        // Methods for trusted sessions only.
        for (method, params) in [
            ("user.create", ["user": "eve"]), ("user.remove", ["user": "me"]), ("chat.remove", ["chat": "c"]),
            ("server.stats", [:]),
        ] as [(String, JSONObject)] {
            let refused = try await bob.call(method, params)
            #expect(refused["error"]?["code"] == .integer(-32007), "\(method)")
        }
        #expect(try await backend.result("chat.members", ["chat": "c"]) == ["members": ["bob", "me"]])
        // A post without `sender` is the session's user's (a trusted session must name one).
        _ = try await bob.result("message.post", ["chat": "c", "id": "m1", "text": "hi", "sentAt": 5])
        let page = try await backend.result("messages.list", ["chat": "c"])
        #expect(page["items"]?.arrayValue?.first?["sender"] == "bob")
        let unnamed = try await backend.call("message.post", ["chat": "c", "id": "m2", "text": "hi", "sentAt": 6])
        #expect(unnamed["error"]?["data"]?["field"] == "sender")
    }

    @Test func theDefaultUserIsConfigured() async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory, defaultUser: "zoe")
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = SessionClient(engine.openInProcessSession())
        let missing = try await backend.call("chats.list")
        #expect(missing["error"]?["code"] == .integer(-32001))
        _ = try await backend.result("user.create", ["user": "zoe", "createdAt": 1])
        _ = try await backend.result("chat.create", ["chat": "z", "title": "Z", "createdAt": 1])
        #expect(try await backend.result("chat.members", ["chat": "z"]) == ["members": ["zoe"]])
    }

    /// The first requests of 100 users that arrive together share group commits, from 100 user
    /// sessions (a user session's user is looked up without a commit) and from one trusted
    /// session naming them (a user missing from the known-users cache is found among the
    /// committed users without a commit). Committing before each lookup took 100 groups of one;
    /// for trusted sessions that happened again after every commit of another process, which
    /// empties the cache.
    @Test(arguments: [false, true])
    func firstWritesOfManyUsersShareGroupCommits(trusted: Bool) async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = SessionClient(engine.openInProcessSession())
        let users = (0..<100).map { "u\($0)" }
        for user in users { _ = try await backend.result("user.create", ["user": .string(user)]) }
        _ = try await backend.result("chat.create", [
            "chat": "all", "title": "All", "createdAt": 1, "members": .array(users.map { .string($0) }),
        ])
        let sessions = trusted ? [] : users.map { SessionClient(engine.openInProcessSession(identity: .user($0))) }
        // The engine thread waits inside the observer while every post arrives.
        let observer = HoldingObserver()
        engine.observer = observer
        observer.hold()
        #expect(backend.session.send(SessionClient.line(id: 900, "chat.rename", ["chat": "all", "title": "Renamed"])))
        await observer.waitUntilHolding()
        for (index, user) in users.enumerated() {
            var params: JSONObject = ["chat": "all", "id": .string("p\(index)"), "text": "hi", "sentAt": .integer(Int64(10 + index))]
            if trusted {
                params["user"] = .string(user)
                params["sender"] = .string(user)
                #expect(backend.session.send(SessionClient.line(id: 1 + index, "message.post", params)))
            } else {
                #expect(sessions[index].session.send(SessionClient.line(id: 1, "message.post", params)))
            }
        }
        observer.release()
        if trusted {
            _ = try await backend.response(to: 900)
            for index in users.indices { #expect(try await backend.response(to: 1 + index)["result"]?["duplicate"] == .bool(false)) }
        } else {
            for session in sessions { #expect(try await session.response(to: 1)["result"]?["duplicate"] == .bool(false)) }
        }
        let groups = observer.groups.dropFirst()  // the rename's
        #expect(groups.reduce(0, +) == 100)
        // One or a few groups on an idle machine (11 seen in a whole run beside other work).
        #expect(groups.count <= 25, "100 posts of 100 users took \(groups.count) group commits: \(groups)")
    }

    /// A user session opened after its user was removed (a removal between the gateway's check
    /// of the token and the session's opening) finds its user gone at its first request.
    @Test func aSessionOpenedAfterItsUserWasRemovedFindsItGone() async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = SessionClient(engine.openInProcessSession())
        _ = try await backend.result("user.create", ["user": "bob"])
        _ = try await backend.result("user.remove", ["user": "bob"])
        let bob = SessionClient(engine.openInProcessSession(identity: .user("bob")))
        let gone = try await bob.call("chats.list")
        #expect(gone["error"]?["code"] == .integer(-32001), "\(gone)")
    }

    /// `user.remove` of a user with an open user session: that session's requests that act as
    /// its user are −32001 (user not found) from then on; the others (`server.version`) go on.
    @Test func aRemovedUsersSessionFindsItsUserGone() async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = SessionClient(engine.openInProcessSession())
        _ = try await backend.result("user.create", ["user": "bob"])
        let bob = SessionClient(engine.openInProcessSession(identity: .user("bob")))
        _ = try await bob.result("chat.create", ["chat": "b", "title": "B", "createdAt": 1])
        _ = try await backend.result("user.remove", ["user": "bob"])
        for (method, params) in [("chats.list", [:]), ("chat.create", ["chat": "c", "title": "C"]), ("feed.subscribe", [:])] as [(String, JSONObject)] {
            let gone = try await bob.call(method, params)
            #expect(gone["error"]?["code"] == .integer(-32001), "\(method): \(gone)")
            #expect(gone["error"]?["message"]?.stringValue?.contains("user") == true)
        }
        _ = try await bob.result("server.version")
        #expect(try await backend.result("chats.list")["total"] == .integer(0))
    }

    /// A user removed by another process (`chatfeed user remove`) while the engine knows them:
    /// once the engine has seen that commit, their user session's requests that act as them,
    /// and a trusted session's that name them, are −32001, as after the engine's own removal.
    @Test func aUserRemovedByAnotherProcessIsGoneForTheEngineToo() async throws {
        let directory = try TemporaryDirectory()
        let engine = try Self.engine(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        let backend = SessionClient(engine.openInProcessSession())
        _ = try await backend.result("user.create", ["user": "eve"])
        _ = try await backend.result("chat.create", ["chat": "e", "title": "E", "createdAt": 1, "user": "eve"])
        let eve = SessionClient(engine.openInProcessSession(identity: .user("eve")))
        #expect(try await eve.result("chats.list")["total"] == .integer(1))
        #expect(try await backend.result("chats.list", ["user": "eve"])["total"] == .integer(1))
        let writer = try ChatDatabase(path: directory.path("users.sqlite"))
        try writer.apply(.removeUser(id: "eve"))
        // The engine notices another process's commit within milliseconds (inotify, else its poll).
        let deadline = Date().addingTimeInterval(20)
        while try await eve.call("chats.list")["error"] == nil, Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let asEve: JSONObject = ["user": "eve"]
        for (client, params) in [(eve, JSONObject()), (backend, asEve)] {
            let gone = try await client.call("chats.list", params)
            #expect(gone["error"]?["code"] == .integer(-32001), "\(params): \(gone)")
            #expect(gone["error"]?["message"]?.stringValue?.contains("eve") == true)
        }
        _ = try await eve.result("server.version")
    }
}
