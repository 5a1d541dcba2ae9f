import ChatModel

/// Every user's live lists in use (docs/PROTOCOL.md, The live feed, Users): one `LiveFeed` per
/// user with a subscription, built from that user's chats when their first subscription arrives
/// and dropped once they have had none for a while, so that memory follows the lists in use,
/// never the number of users or memberships in the store.
///
/// Subscription ids are unique across users. A change reaches only the feed of the user it was
/// read for: a subscription of another user's list costs nothing for it.
///
/// Not thread-safe: one serialization point owns it and sends what each call returns, in order,
/// before it calls again.
public final class UserFeeds {
    public let options: FeedOptions
    private var feeds: [String: LiveFeed] = [:]
    /// The user of each open subscription.
    private var userOfSubscription: [String: String] = [:]
    /// Live users without a subscription, and since when.
    private var idleSince: [String: ContinuousClock.Instant] = [:]
    private var nextSubscriptionNumber = 1
    /// The keys of `feeds`, by id (bytewise).
    public private(set) var liveUsers: [String] = []

    public init(options: FeedOptions = FeedOptions()) {
        self.options = options
    }

    /// True when `user`'s lists are live (loaded and kept up to date).
    public func isLive(_ user: String) -> Bool { feeds[user] != nil }

    /// `user`'s live lists, when they are live.
    public func index(of user: String) -> ChatIndex? { feeds[user]?.index }

    /// The open subscriptions, of every user.
    public var subscriptionCount: Int { userOfSubscription.count }

    /// Every user's `LiveFeed.waitingSubscriptionCount`: an ack may release a batch only when
    /// this is above 0. O(1).
    public private(set) var waitingSubscriptionCount = 0

    /// Calls `body` with `feed`, keeping `waitingSubscriptionCount` up to date with it.
    private func updating<Result, Failure: Error>(
        _ feed: LiveFeed, _ body: (LiveFeed) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let before = feed.waitingSubscriptionCount
        defer { waitingSubscriptionCount += feed.waitingSubscriptionCount - before }
        return try body(feed)
    }

    /// Makes `user`'s lists live with `chats` (every chat of the user, in list order for the
    /// fastest start; without their content when `content` is given, see `ChatContentSource`),
    /// as of the moment the caller next applies changes after; idle until a subscription
    /// arrives. Replaces lists already live (their subscriptions get resets).
    ///
    /// - Complexity: O(n) for n chats in list order.
    @discardableResult
    public func load(
        _ user: String, chats: [Chat], content: ChatContentSource? = nil, now: ContinuousClock.Instant
    ) -> [FeedNotification] {
        if feeds[user] != nil { return reload(user, chats: chats, content: content) }
        feeds[user] = LiveFeed(chats: chats, options: options, content: content)
        liveUsers.insert(user, at: liveUsers.firstIndex { !$0.utf8.lexicographicallyPrecedes(user.utf8) } ?? liveUsers.endIndex)
        idleSince[user] = now
        return []
    }

    /// Subscribes to a list of `user`, whose lists must be live (`load`); see
    /// `LiveFeed.subscribe(view:limit:maxInFlight:known:)`.
    ///
    /// - Throws: `limitReached` when `maxSubscriptions` are open (every user's count),
    ///   `invalidParams` as `LiveFeed` does; nothing is subscribed then.
    public func subscribe(
        user: String, view: ChatListView = .main, limit: Int?, maxInFlight: Int?, known: [KnownRow]? = nil
    ) throws(ChatError) -> FeedSnapshot {
        guard let feed = feeds[user] else { preconditionFailure("subscribe to \(user)'s lists before they are loaded") }
        if userOfSubscription.count >= options.maxSubscriptions {
            throw .limitReached(
                setting: "maxSubscriptions", limit: options.maxSubscriptions,
                reason: "too many subscriptions: unsubscribe one (feed.unsubscribe) before subscribing again")
        }
        feed.nextSubscriptionNumber = nextSubscriptionNumber
        let snapshot = try feed.subscribe(view: view, limit: limit, maxInFlight: maxInFlight, known: known)
        nextSubscriptionNumber = feed.nextSubscriptionNumber
        userOfSubscription[snapshot.subscription] = user
        idleSince[user] = nil
        return snapshot
    }

    /// The user whose list a subscription shows.
    public func user(of subscription: String) -> String? { userOfSubscription[subscription] }

    /// Ends a subscription; its user is idle from `now` when it was their last.
    public func unsubscribe(_ id: String, now: ContinuousClock.Instant) throws(ChatError) {
        guard let user = userOfSubscription[id], let feed = feeds[user] else {
            throw .notFound(kind: "subscription", id: id)
        }
        try updating(feed) { feed throws(ChatError) in try feed.unsubscribe(id) }
        userOfSubscription[id] = nil
        if feed.subscriptionCount == 0 { idleSince[user] = now }
    }

    /// See `LiveFeed.acknowledge(_:seq:)`.
    public func acknowledge(_ id: String, seq: Int) throws(ChatError) -> [FeedNotification] {
        guard let user = userOfSubscription[id], let feed = feeds[user] else {
            throw .notFound(kind: "subscription", id: id)
        }
        return try updating(feed) { feed throws(ChatError) in try feed.acknowledge(id, seq: seq) }
    }

    /// Applies `user`'s changed chats (as that user sees them, in commit order) to their live
    /// lists; nothing when they are not live. See `LiveFeed.apply(_:)`.
    ///
    /// - Complexity: that of `LiveFeed.apply(_:)` on `user`'s lists alone.
    public func apply(_ changes: [ChatChange], of user: String) -> [FeedNotification] {
        guard !changes.isEmpty, let feed = feeds[user] else { return [] }
        return updating(feed) { $0.apply(changes) }
    }

    /// Replaces `user`'s live lists after a gap in the change log (see
    /// `LiveFeed.reload(chats:content:)`).
    public func reload(_ user: String, chats: [Chat], content: ChatContentSource? = nil) -> [FeedNotification] {
        guard let feed = feeds[user] else { return [] }
        return updating(feed) { $0.reload(chats: chats, content: content) }
    }

    /// Drops the lists of every user idle since before `deadline`, and returns those users.
    ///
    /// - Complexity: O(idle users).
    @discardableResult
    public func dropIdle(before deadline: ContinuousClock.Instant) -> [String] {
        var dropped: [String] = []
        for (user, since) in idleSince where since <= deadline {
            dropped.append(user)
        }
        for user in dropped {
            idleSince[user] = nil
            feeds[user] = nil  // no subscription: none waits
        }
        if !dropped.isEmpty { liveUsers.removeAll { feeds[$0] == nil } }
        return dropped.sorted()
    }

    /// Every subscription's state, in the order they were made.
    public var subscriptionStats: [SubscriptionStats] {
        var stats: [SubscriptionStats] = []
        for (user, feed) in feeds {
            for var subscription in feed.subscriptionStats {
                subscription.user = user
                stats.append(subscription)
            }
        }
        return stats.sorted { Self.number(of: $0.subscription) < Self.number(of: $1.subscription) }
    }

    private static func number(of subscription: String) -> Int { Int(subscription.dropFirst()) ?? 0 }
}
