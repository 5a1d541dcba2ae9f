import ChatModel
import JSONCodec

/// The result of `server.stats`: the store's counts and the engine's subscriptions. The engine
/// encodes it (`jsonValue`) and clients decode it (`init(jsonValue:)`): its keys are spelled here
/// only.
public struct ServerStats: Hashable, Sendable {
    /// Users in the store (0 from an engine older than users).
    public var users: Int
    /// Memberships (a user's row of a chat) in the store.
    public var memberships: Int
    /// Users whose chat lists the engine keeps live (those with a subscription, and those
    /// whose last one ended less than `idleUserIndexSeconds` ago).
    public var liveUsers: Int
    public var chats: Int
    public var messages: Int
    public var latestChangeSequence: Int64
    /// Since the engine started.
    public var uptimeMilliseconds: Int64
    /// The engine's open sessions (0 from an engine older than sessions).
    public var sessions: Int
    /// Every subscription the engine serves (every session's).
    public var subscriptions: [ServerSubscriptionStats]
    /// The whole answer, for the fields this type does not name (a newer server's).
    public var json: JSONValue

    public init(
        users: Int = 0, memberships: Int = 0, liveUsers: Int = 0,
        chats: Int, messages: Int, latestChangeSequence: Int64, uptimeMilliseconds: Int64, sessions: Int = 0,
        subscriptions: [ServerSubscriptionStats]
    ) {
        self.users = users
        self.memberships = memberships
        self.liveUsers = liveUsers
        self.chats = chats
        self.messages = messages
        self.latestChangeSequence = latestChangeSequence
        self.uptimeMilliseconds = uptimeMilliseconds
        self.sessions = sessions
        self.subscriptions = subscriptions
        json = .null
        json = jsonValue
    }

    /// `{"users","memberships","liveUsers","chats","messages","latestChangeSequence","uptimeMs","sessions","subscriptions":[…]}`.
    public var jsonValue: JSONValue {
        .object([
            "users": .integer(users),
            "memberships": .integer(memberships),
            "liveUsers": .integer(liveUsers),
            "chats": .integer(chats),
            "messages": .integer(messages),
            "latestChangeSequence": .integer(latestChangeSequence),
            "uptimeMs": .integer(uptimeMilliseconds),
            "sessions": .integer(sessions),
            "subscriptions": .array(subscriptions.map(\.jsonValue)),
        ])
    }

    /// Decodes the result; members it does not know are ignored.
    public init(jsonValue: JSONValue) throws(WireDecodingError) {
        do {
            let reader = try ParamsReader(result: jsonValue, field: "")
            guard case .array(let items)? = reader.object["subscriptions"] else {
                throw ChatError.invalidParams(field: "subscriptions", reason: "is required (an array)")
            }
            var subscriptions: [ServerSubscriptionStats] = []
            for (position, item) in items.enumerated() {
                subscriptions.append(try ServerSubscriptionStats(
                    reader: ParamsReader(result: item, field: "subscriptions[\(position)]")))
            }
            self.init(
                users: try reader.optionalInt("users", in: 0...Int.max) ?? 0,
                memberships: try reader.optionalInt("memberships", in: 0...Int.max) ?? 0,
                liveUsers: try reader.optionalInt("liveUsers", in: 0...Int.max) ?? 0,
                chats: try reader.int("chats", in: 0...Int.max), messages: try reader.int("messages", in: 0...Int.max),
                latestChangeSequence: try reader.int64("latestChangeSequence"),
                uptimeMilliseconds: try reader.int64("uptimeMs"),
                sessions: try reader.optionalInt("sessions", in: 0...Int.max) ?? 0, subscriptions: subscriptions)
            json = jsonValue
        } catch let error as ChatError {
            throw WireDecodingError(error)
        } catch {
            throw WireDecodingError(field: "result", reason: "\(error)")
        }
    }
}

/// One subscription in `server.stats`: what it sees and how far its client is behind.
public struct ServerSubscriptionStats: Hashable, Sendable {
    public var subscription: String
    /// The user whose list it shows (nil from an engine older than users).
    public var user: String?
    public var list: ChatList
    public var unreadOnly: Bool
    /// The window (nil: the whole list).
    public var limit: Int?
    public var maxInFlight: Int
    public var lastSentSeq: Int64
    public var lastAckedSeq: Int64
    /// Distinct chats changed since its last notification.
    public var pendingChats: Int
    /// A deferred batch waits to be sent.
    public var deferredPending: Bool
    /// Its next notification is a reset (the window fell too far behind).
    public var resetPending: Bool

    public init(
        subscription: String, list: ChatList, unreadOnly: Bool, limit: Int?, maxInFlight: Int, lastSentSeq: Int64,
        lastAckedSeq: Int64, pendingChats: Int, deferredPending: Bool, resetPending: Bool, user: String? = nil
    ) {
        self.subscription = subscription
        self.user = user
        self.list = list
        self.unreadOnly = unreadOnly
        self.limit = limit
        self.maxInFlight = maxInFlight
        self.lastSentSeq = lastSentSeq
        self.lastAckedSeq = lastAckedSeq
        self.pendingChats = pendingChats
        self.deferredPending = deferredPending
        self.resetPending = resetPending
    }

    public var jsonValue: JSONValue {
        .object([
            "subscription": .string(subscription),
            "user": user.map(JSONValue.string) ?? .null,
            "list": .string(list.rawValue),
            "unreadOnly": .bool(unreadOnly),
            "limit": limit.map(JSONValue.integer) ?? .null,
            "maxInFlight": .integer(maxInFlight),
            "lastSentSeq": .integer(lastSentSeq),
            "lastAckedSeq": .integer(lastAckedSeq),
            "pendingChats": .integer(pendingChats),
            "deferredPending": .bool(deferredPending),
            "resetPending": .bool(resetPending),
        ])
    }

    init(reader: ParamsReader) throws(ChatError) {
        guard let list = try reader.optionalList("list") else {
            throw .invalidParams(field: reader.path("list"), reason: "is required")
        }
        self.init(
            subscription: try reader.string("subscription"), list: list, unreadOnly: try reader.bool("unreadOnly"),
            limit: try reader.optionalInt("limit", in: 0...Int.max), maxInFlight: try reader.int("maxInFlight", in: 0...Int.max),
            lastSentSeq: try reader.int64("lastSentSeq"), lastAckedSeq: try reader.int64("lastAckedSeq"),
            pendingChats: try reader.int("pendingChats", in: 0...Int.max), deferredPending: try reader.bool("deferredPending"),
            resetPending: try reader.bool("resetPending"), user: try reader.optionalString("user"))
    }
}
