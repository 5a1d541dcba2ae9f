import ChangeFeed
import ChatModel
import Testing

/// Every user's live lists (`UserFeeds`): subscription ids unique across users, one
/// `maxSubscriptions` for all, a change reaching only its user's subscriptions, and idle users'
/// lists dropped while subscribed users' stay.
@Suite struct UserFeedsTests {
    static func chat(_ id: String, date: Int64, unread: Int64 = 0) -> Chat {
        Chat(
            id: id, title: id, createdAt: date, lastMessage: nil, lastMessageDate: date, unread: unread, revision: date,
            list: .main, pinOrder: 0, muted: false)
    }

    @Test func subscriptionsOfSeveralUsers() throws {
        let feeds = UserFeeds(options: FeedOptions(defaultMaxInFlight: 0, maxSubscriptions: 3))
        let start = ContinuousClock.now
        feeds.load("ann", chats: [Self.chat("a", date: 2), Self.chat("b", date: 1)], now: start)
        feeds.load("bob", chats: [Self.chat("b", date: 1)], now: start)
        #expect(feeds.liveUsers == ["ann", "bob"])
        let ann = try feeds.subscribe(user: "ann", limit: nil, maxInFlight: nil)
        let bob = try feeds.subscribe(user: "bob", limit: nil, maxInFlight: nil)
        let ann2 = try feeds.subscribe(user: "ann", limit: 1, maxInFlight: nil)
        #expect(Set([ann.subscription, bob.subscription, ann2.subscription]).count == 3)
        #expect(feeds.user(of: bob.subscription) == "bob")
        #expect(throws: ChatError.self) { try feeds.subscribe(user: "bob", limit: nil, maxInFlight: nil) }
        // Bob's change reaches his subscription alone.
        let notifications = feeds.apply([ChatChange(chatID: "b", chat: Self.chat("b", date: 9, unread: 1))], of: "bob")
        #expect(notifications.map(\.subscription) == [bob.subscription])
        #expect(notifications.first?.counts.unread.messages == 1)
        #expect(feeds.index(of: "ann")?.chat(id: "b")?.unread == 0)
        #expect(feeds.apply([ChatChange(chatID: "x", chat: nil)], of: "nobody").isEmpty)
        // Idle users are dropped; a user with a subscription is not.
        try feeds.unsubscribe(bob.subscription, now: start)
        #expect(feeds.dropIdle(before: start + .seconds(1)) == ["bob"])
        #expect(feeds.liveUsers == ["ann"])
        #expect(!feeds.isLive("bob"))
        try feeds.unsubscribe(ann.subscription, now: start)
        #expect(feeds.dropIdle(before: start + .seconds(1)).isEmpty)
        #expect(feeds.subscriptionStats.map(\.user) == ["ann"])
        try feeds.unsubscribe(ann2.subscription, now: start + .seconds(5))
        #expect(feeds.dropIdle(before: start + .seconds(4)).isEmpty)
        #expect(feeds.dropIdle(before: start + .seconds(5)) == ["ann"])
        #expect(throws: ChatError.self) { try feeds.unsubscribe(ann.subscription, now: start) }
    }
}
