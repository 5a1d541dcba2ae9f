import ChatfeedEngine
import Foundation
import JSONCodec
import Testing
import TestSupport

/// The rights of a user session (docs/PROTOCOL.md, Users and sessions), one rule at a time: what
/// it may do, −32007 naming the right for what it may not, −32001 for a chat it is not in (and a
/// message in one); nothing changes on a refusal.
@Suite(.serialized) struct RightsTests {
    static let forbidden: JSONValue = .integer(-32007)
    static let notFound: JSONValue = .integer(-32001)

    /// ann and bob share "ab"; bob and cat share "bc"; m1 (ann) and m2 (bob) are in "ab", m3 (bob) in "bc".
    private static func setUp(_ directory: TemporaryDirectory) async throws -> (ChatEngine, trusted: SessionClient, ann: SessionClient) {
        let engine = try ChatEngine(options: EngineOptions(databasePath: directory.path("rights.sqlite")))
        let trusted = SessionClient(engine.openInProcessSession())
        for user in ["ann", "bob", "cat"] { _ = try await trusted.result("user.create", ["user": .string(user)]) }
        _ = try await trusted.result("chat.create", ["chat": "ab", "title": "AB", "createdAt": 1, "members": ["ann", "bob"]])
        _ = try await trusted.result("chat.create", ["chat": "bc", "title": "BC", "createdAt": 2, "members": ["bob", "cat"]])
        for (id, chat, sender) in [("m1", "ab", "ann"), ("m2", "ab", "bob"), ("m3", "bc", "bob")] {
            _ = try await trusted.result("message.post", [
                "chat": .string(chat), "id": .string(id), "sender": .string(sender), "text": "hi", "sentAt": 10,
            ])
        }
        return (engine, trusted, SessionClient(engine.openInProcessSession(identity: .user("ann"))))
    }

    private static func code(_ response: JSONValue) -> JSONValue? { response["error"]?["code"] }

    @Test func readsAreOwnListsAndChatsTheUserIsIn() async throws {
        let directory = try TemporaryDirectory()
        let (engine, _, ann) = try await Self.setUp(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        let list = try await ann.result("chats.list")
        #expect(list["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["ab"])
        #expect(Self.code(try await ann.call("chats.list", ["user": "bob"])) == Self.forbidden)
        #expect(try await ann.result("chat.members", ["chat": "ab"])["members"] == ["ann", "bob"])
        #expect(Self.code(try await ann.call("chat.members", ["chat": "bc"])) == Self.notFound)
        #expect(try await ann.result("messages.list", ["chat": "ab"])["items"]?.arrayValue?.count == 2)
        #expect(Self.code(try await ann.call("messages.list", ["chat": "bc"])) == Self.notFound)
        // A chat that does not exist looks the same as one the user is not in.
        let missing = try await ann.call("messages.list", ["chat": "nowhere"])
        let hidden = try await ann.call("messages.list", ["chat": "bc"])
        #expect(Self.code(missing) == Self.notFound)
        #expect(hidden["error"]?["message"]?.stringValue?.contains("bc") == true)
        _ = try await ann.result("server.version")
        let stats = try await ann.call("server.stats")
        #expect(Self.code(stats) == Self.forbidden)
        #expect(stats["error"]?["message"]?.stringValue?.contains("server.stats") == true)
    }

    @Test func postsAsItselfToChatsItIsIn() async throws {
        let directory = try TemporaryDirectory()
        let (engine, trusted, ann) = try await Self.setUp(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        _ = try await ann.result("message.post", ["chat": "ab", "id": "a1", "sender": "ann", "text": "mine", "sentAt": 20])
        let asBob = try await ann.call("message.post", ["chat": "ab", "id": "a2", "sender": "bob", "text": "forged", "sentAt": 21])
        #expect(Self.code(asBob) == Self.forbidden)
        #expect(asBob["error"]?["data"]?["right"] == "post as another user")
        #expect(asBob["error"]?["message"]?.stringValue?.contains("post as another user") == true)
        #expect(Self.code(try await ann.call("message.post", ["chat": "bc", "id": "a3", "sender": "ann", "text": "x", "sentAt": 22])) == Self.notFound)
        // Nothing of the refused posts was written.
        let ab = try await trusted.result("messages.list", ["chat": "ab"])
        #expect(ab["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue }.sorted() == ["a1", "m1", "m2"])
        #expect(try await trusted.result("messages.list", ["chat": "bc"])["items"]?.arrayValue?.count == 1)
    }

    /// A user session holds at most `maxSubscriptionsPerConnection` subscriptions (one more is
    /// −32005 naming the setting, and frees none); a trusted session is bound by
    /// `maxSubscriptions` only.
    @Test func aUserSessionHoldsAtMostItsConnectionsSubscriptions() async throws {
        let directory = try TemporaryDirectory()
        let engine = try ChatEngine(options: EngineOptions(
            databasePath: directory.path("limit.sqlite"), maxSubscriptionsPerConnection: 2))
        defer { engine.stop(); engine.waitUntilStopped() }
        let trusted = SessionClient(engine.openInProcessSession())
        _ = try await trusted.result("user.create", ["user": "ann"])
        let ann = SessionClient(engine.openInProcessSession(identity: .user("ann")))
        let first = try await ann.result("feed.subscribe")
        _ = try await ann.result("feed.subscribe", ["list": "archive"])
        let third = try await ann.call("feed.subscribe", ["unreadOnly": true])
        #expect(third["error"]?["code"] == .integer(-32005))
        #expect(third["error"]?["data"]?["setting"] == "maxSubscriptionsPerConnection")
        _ = try await ann.result("feed.unsubscribe", ["subscription": try #require(first["subscription"])])
        _ = try await ann.result("feed.subscribe", ["unreadOnly": true])
        for _ in 0..<3 { _ = try await trusted.result("feed.subscribe", ["user": "ann"]) }
    }

    /// Writes of one round (one chunk of input, committed together) are checked in their order:
    /// a message posted in the round can be edited in it, and a user who leaves a chat in the
    /// round cannot post to it after (the removal commits before the check).
    @Test func writesOfOneRoundAreCheckedInTheirOrder() async throws {
        let directory = try TemporaryDirectory()
        let (engine, trusted, ann) = try await Self.setUp(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        #expect(ann.session.send(
            SessionClient.line(id: 901, "message.post", ["chat": "ab", "id": "r1", "sender": "ann", "text": "x", "sentAt": 30])
                + SessionClient.line(id: 902, "message.edit", ["id": "r1", "text": "y"])))
        #expect(try await ann.response(to: 901)["result"] != nil)
        let edit = try await ann.response(to: 902)
        #expect(edit["result"] != nil, "an edit of a post of the same round: \(edit)")
        #expect(ann.session.send(
            SessionClient.line(id: 903, "chat.removeMembers", ["chat": "ab", "users": ["ann"]])
                + SessionClient.line(id: 904, "message.post", ["chat": "ab", "id": "r2", "sender": "ann", "text": "gone", "sentAt": 31])))
        #expect(try await ann.response(to: 903)["result"] != nil)
        #expect(Self.code(try await ann.response(to: 904)) == Self.notFound)
        let ab = try await trusted.result("messages.list", ["chat": "ab"])
        #expect(ab["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue }.sorted() == ["m1", "m2", "r1"])
    }

    @Test func editsAndDeletesItsOwnMessagesInChatsItIsStillIn() async throws {
        let directory = try TemporaryDirectory()
        let (engine, trusted, ann) = try await Self.setUp(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        _ = try await ann.result("message.edit", ["id": "m1", "text": "edited"])
        let notMine = try await ann.call("message.edit", ["id": "m2", "text": "not mine"])
        #expect(Self.code(notMine) == Self.forbidden)
        #expect(notMine["error"]?["data"]?["right"] == "edit another user's message")
        #expect(Self.code(try await ann.call("message.delete", ["id": "m2"])) == Self.forbidden)
        #expect(Self.code(try await ann.call("message.edit", ["id": "m3", "text": "hidden"])) == Self.notFound)
        #expect(Self.code(try await ann.call("message.delete", ["id": "m3"])) == Self.notFound)
        _ = try await ann.result("message.post", ["chat": "ab", "id": "a1", "sender": "ann", "text": "later", "sentAt": 20])
        _ = try await ann.result("message.delete", ["id": "a1"])
        #expect(Self.code(try await ann.call("message.edit", ["id": "a1", "text": "gone"])) == Self.notFound)
        // Out of the chat, its own messages there are out of reach too.
        _ = try await ann.result("chat.removeMembers", ["chat": "ab", "users": ["ann"]])
        #expect(Self.code(try await ann.call("message.edit", ["id": "m1", "text": "again"])) == Self.notFound)
        let texts = try await trusted.result("messages.list", ["chat": "ab"])["items"]?.arrayValue?.compactMap { $0["text"]?.stringValue }
        #expect(texts?.sorted() == ["edited", "hi"])
        #expect(try await trusted.result("messages.list", ["chat": "bc"])["items"]?.arrayValue?.first?["text"] == "hi")
    }

    /// A message id taken in a chat the user is not in: the conflict names nothing of that chat
    /// (its id, the sender, the date, whether the text differs); a trusted session gets the
    /// detail; nothing is written; an exact retry of the session's own post is a duplicate.
    @Test func aTakenMessageIdIsAConflictThatNamesNothingOfTheOtherChat() async throws {
        let directory = try TemporaryDirectory()
        let (engine, trusted, ann) = try await Self.setUp(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        let taken = try await ann.call("message.post", ["chat": "ab", "id": "m3", "sender": "ann", "text": "other", "sentAt": 11])
        #expect(Self.code(taken) == .integer(-32002))
        let told = try #require(taken["error"]?["message"]?.stringValue)
        #expect(told.contains("'m3'"))
        for secret in ["'bc'", "bob", "10", "another text"] { #expect(!told.contains(secret), "\(secret) in: \(told)") }
        let detailed = try await trusted.call("message.post", ["chat": "ab", "id": "m3", "sender": "ann", "text": "other", "sentAt": 11])
        #expect(detailed["error"]?["message"]?.stringValue?.contains("chat 'bc'") == true)
        let ab = try await trusted.result("messages.list", ["chat": "ab"])
        #expect(ab["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue }.sorted() == ["m1", "m2"])
        _ = try await ann.result("message.post", ["chat": "ab", "id": "a1", "sender": "ann", "text": "mine", "sentAt": 20])
        let retried = try await ann.result("message.post", ["chat": "ab", "id": "a1", "text": "mine", "sentAt": 20])
        #expect(retried["duplicate"] == .bool(true))
    }

    /// A retried delete of the session's own message is answered as a trusted session's is;
    /// another user's deleted message stays out of reach (not found), and so does editing one's
    /// own deleted message.
    @Test func aRetriedDeleteOfItsOwnMessageIsAnsweredAsForATrustedSession() async throws {
        let directory = try TemporaryDirectory()
        let (engine, trusted, ann) = try await Self.setUp(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        let first = try await ann.call("message.delete", ["id": "m1"])
        let again = try await ann.call("message.delete", ["id": "m1"])
        _ = try await trusted.result("message.delete", ["id": "m2"])
        let trustedAgain = try await trusted.call("message.delete", ["id": "m2"])
        #expect(first["result"] != nil)
        #expect(again["result"] == trustedAgain["result"], "\(again)")
        #expect(Self.code(try await ann.call("message.delete", ["id": "m2"])) == Self.notFound)
        #expect(Self.code(try await ann.call("message.edit", ["id": "m1", "text": "back"])) == Self.notFound)
        #expect(try await trusted.result("messages.list", ["chat": "ab"])["items"]?.arrayValue?.isEmpty == true)
    }

    @Test func createsChatsAddsMembersAndRemovesOnlyItself() async throws {
        let directory = try TemporaryDirectory()
        let (engine, trusted, ann) = try await Self.setUp(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        // The creator is always a member, even when `members` leaves it out.
        _ = try await ann.result("chat.create", ["chat": "new", "title": "New", "createdAt": 5, "members": ["bob"]])
        #expect(try await ann.result("chat.members", ["chat": "new"])["members"] == ["ann", "bob"])
        _ = try await ann.result("chat.addMembers", ["chat": "ab", "users": ["cat"]])
        #expect(Self.code(try await ann.call("chat.addMembers", ["chat": "bc", "users": ["ann"]])) == Self.notFound)
        let removeBob = try await ann.call("chat.removeMembers", ["chat": "ab", "users": ["bob"]])
        #expect(Self.code(removeBob) == Self.forbidden)
        #expect(removeBob["error"]?["data"]?["right"] == "remove other members")
        #expect(removeBob["error"]?["message"]?.stringValue?.contains("remove other members") == true)
        #expect(Self.code(try await ann.call("chat.removeMembers", ["chat": "bc", "users": ["bob"]])) == Self.notFound)
        #expect(try await trusted.result("chat.members", ["chat": "ab"])["members"] == ["ann", "bob", "cat"])
        #expect(try await trusted.result("chat.members", ["chat": "bc"])["members"] == ["bob", "cat"])
        _ = try await ann.result("chat.removeMembers", ["chat": "ab", "users": ["ann"]])
        #expect(Self.code(try await ann.call("chat.members", ["chat": "ab"])) == Self.notFound)
        // Trusted-only methods.
        #expect(Self.code(try await ann.call("chat.remove", ["chat": "new"])) == Self.forbidden)
        #expect(Self.code(try await ann.call("user.create", ["user": "dan"])) == Self.forbidden)
        #expect(Self.code(try await ann.call("user.remove", ["user": "bob"])) == Self.forbidden)
        #expect(try await trusted.result("chat.members", ["chat": "new"])["members"] == ["ann", "bob"])
    }

    @Test func renamesAndKeepsItsOwnStateOfChatsItIsIn() async throws {
        let directory = try TemporaryDirectory()
        let (engine, trusted, ann) = try await Self.setUp(directory)
        defer { engine.stop(); engine.waitUntilStopped() }
        #expect(try await ann.result("chat.rename", ["chat": "ab", "title": "Renamed"])["title"] == "Renamed")
        #expect(Self.code(try await ann.call("chat.rename", ["chat": "bc", "title": "Mine"])) == Self.notFound)
        for method in ["chat.markRead", "chat.pin", "chat.unpin", "chat.mute", "chat.unmute", "chat.archive", "chat.unarchive"] {
            #expect(try await ann.call(method, ["chat": "ab"])["result"] != nil, "\(method)")
            #expect(Self.code(try await ann.call(method, ["chat": "bc"])) == Self.notFound, "\(method)")
            #expect(Self.code(try await ann.call(method, ["chat": "ab", "user": "bob"])) == Self.forbidden, "\(method)")
        }
        let bc = try await trusted.result("chats.list", ["user": "bob"])
        #expect(bc["items"]?.arrayValue?.first { $0["id"] == "bc" }?["title"] == "BC")
        let bobsAB = try #require(bc["items"]?.arrayValue?.first { $0["id"] == "ab" })
        #expect(bobsAB["pinned"] == .bool(false) && bobsAB["muted"] == .bool(false))
    }
}
