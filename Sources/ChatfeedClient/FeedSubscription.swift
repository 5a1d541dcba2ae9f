/// A live subscription: an `AsyncSequence` of `FeedUpdate`s, in the engine's order, each already
/// validated against the client's mirror. Iterate it once.
///
/// With `.manual` acknowledgement the app calls `acknowledge(_:)` when it has applied an update
/// (in the animation's completion, say); with `.onNext` asking for the next update acknowledges
/// the previous one. With the default `maxInFlight` of 1 the engine sends nothing new until then,
/// and coalesces what happens meanwhile, so the app never holds two animations at once.
public struct FeedSubscription: AsyncSequence, Sendable {
    public typealias Element = FeedUpdate
    public typealias Failure = any Error

    let client: ChatClient
    let handle: Int
    let updates: AsyncThrowingStream<FeedUpdate, any Error>
    public let acknowledgement: AcknowledgementMode

    /// Tells the engine that `update` (and every earlier one) is applied. Updates with seq 0
    /// (snapshots) need none; acknowledging twice, or an update of before a restart, does nothing.
    public func acknowledge(_ update: FeedUpdate) async {
        await client.acknowledge(handle, update)
    }

    /// Ends the subscription: the sequence finishes and the engine stops sending to it.
    public func cancel() async {
        await client.unsubscribe(handle)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(subscription: self, base: updates.makeAsyncIterator())
    }

    public struct Iterator: AsyncIteratorProtocol {
        let subscription: FeedSubscription
        var base: AsyncThrowingStream<FeedUpdate, any Error>.Iterator
        var delivered: FeedUpdate?

        public mutating func next() async throws -> FeedUpdate? {
            if subscription.acknowledgement == .onNext, let delivered {
                await subscription.acknowledge(delivered)
            }
            delivered = try await base.next()
            return delivered
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> FeedUpdate? {
            if subscription.acknowledgement == .onNext, let delivered {
                await subscription.acknowledge(delivered)
            }
            delivered = try await base.next(isolation: actor)
            return delivered
        }
    }
}
