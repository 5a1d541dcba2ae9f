import ListDiff
import Testing
import TestSupport

@Suite("The seeds' examples")
struct ListDiffExampleTests {
    @Test("[0…6] → [1,2,4,5,6,10,11]: deletes [3,0], inserts at 5 and 6")
    func seedWorkedExample() throws {
        let old = [TestItem](ids: [0, 1, 2, 3, 4, 5, 6])
        let new = [TestItem](ids: [1, 2, 4, 5, 6, 10, 11])
        let result = try ListDiffer.diff(from: old, to: new)
        let batch = try #require(result.structural)
        #expect(batch.deletes == [3, 0])
        #expect(batch.inserts.map(\.index) == [5, 6])
        #expect(batch.inserts.map(\.item.id) == [10, 11])
        #expect(batch.moves.isEmpty)
        #expect(result.updates == nil)
        #expect(ReferenceDiff.problem(with: result, old: old, new: new) == nil)
    }

    @Test("[1,2,3,4] → [4,1,2,3] is one move of 4 up")
    func oneMoveUp() throws {
        let result = try ListDiffer.diff(from: [TestItem](ids: [1, 2, 3, 4]), to: [TestItem](ids: [4, 1, 2, 3]))
        #expect(result.structural == Batch(moves: [Move(from: 3, to: 0)]))
        #expect(result.updates == nil)
    }

    @Test("[a,b,c,d] → [b,c,d,a] is one move of a down, not three moves up")
    func oneMoveDown() throws {
        let result = try ListDiffer.diff(from: [TestItem](ids: [1, 2, 3, 4]), to: [TestItem](ids: [2, 3, 4, 1]))
        #expect(result.structural == Batch(moves: [Move(from: 0, to: 3)]))
    }

    @Test("[a,b] → [b,a] moves b, the row that went up")
    func swapMovesTheRowThatWentUp() throws {
        let result = try ListDiffer.diff(from: [TestItem](ids: [1, 2]), to: [TestItem](ids: [2, 1]))
        #expect(result.structural == Batch(moves: [Move(from: 1, to: 0)]))
    }

    @Test("blind [x,a,b,y] → [a,b,x,y] is one move of x down")
    func blindOneMoveDown() throws {
        // x = 0, a = 1, b = 2, y = 3
        let result = try ListDiffer.diff(from: [TestItem](ids: [0, 1, 2, 3]), to: [TestItem](ids: [1, 2, 0, 3]))
        #expect(result.structural == Batch(moves: [Move(from: 0, to: 2)]))
    }

    @Test("the top row moved to the bottom of n rows is one move", arguments: [3, 10, 1000])
    func topToBottom(count: Int) throws {
        let old = [TestItem](ids: Array(0..<count))
        let new = [TestItem](ids: Array(1..<count) + [0])
        let result = try ListDiffer.diff(from: old, to: new)
        #expect(result.structural == Batch(moves: [Move(from: 0, to: count - 1)]))
    }

    @Test("where one move down and one move up are both fewest, the row that went up moves")
    func tieMovesTheRowThatWentUp() throws {
        // [a,b,c,d,e] → [a,c,b,e,d]: two swaps; in each, the row that went up moves.
        let result = try ListDiffer.diff(from: [TestItem](ids: [0, 1, 2, 3, 4]), to: [TestItem](ids: [0, 2, 1, 4, 3]))
        #expect(Set(result.structural?.moves ?? []) == [Move(from: 2, to: 1), Move(from: 4, to: 3)])
    }

    @Test("with x's order key changed, [x,a,b,y] → [a,b,x,y] is one move of x down")
    func changedKeyMovesDown() throws {
        let result = try ListDiffer.diff(
            from: [TestItem](ids: [0, 1, 2, 3]), to: [TestItem](ids: [1, 2, 0, 3]), orderKeyChanged: [0])
        #expect(result.structural == Batch(moves: [Move(from: 0, to: 2)]))
    }

    @Test("a moved row that changed is updated in the deferred batch, at its new index")
    func movedAndChanged() throws {
        let old = [TestItem](ids: [1, 2, 3, 4])
        let new = [TestItem(id: 4, revision: 1), TestItem(id: 1), TestItem(id: 2, revision: 1), TestItem(id: 3)]
        let result = try ListDiffer.diff(from: old, to: new)
        #expect(result.structural == Batch(moves: [Move(from: 3, to: 0)]))
        #expect(result.updates?.updates.map(\.index) == [0, 2])
        #expect(ReferenceDiff.problem(with: result, old: old, new: new) == nil)
    }

    @Test("only revision changes give a single pure-update batch")
    func onlyUpdates() throws {
        let old = [TestItem](ids: [1, 2, 3])
        let new = [TestItem(id: 1), TestItem(id: 2, revision: 5), TestItem(id: 3)]
        let result = try ListDiffer.diff(from: old, to: new)
        #expect(result.structural == nil)
        #expect(result.batches.count == 1)
        #expect(result.updates?.updates == [IndexedItem(index: 1, item: TestItem(id: 2, revision: 5))])
    }

    @Test("equal lists give no batch")
    func noChange() throws {
        #expect(try ListDiffer.diff(from: [TestItem](ids: [1, 2]), to: [TestItem](ids: [1, 2])).batches.isEmpty)
        #expect(try ListDiffer.diff(from: [TestItem](), to: []).batches.isEmpty)
    }

    @Test("duplicate ids are an error that names the id and the list", arguments: [
        ([1, 2, 1], [1], ListSide.old),
        ([1], [2, 3, 3], ListSide.new),
        ([1, 2], [2, 1, 2], ListSide.new),
        ([1, 2, 1], [1, 2, 1], ListSide.old),
        ([1, 2, 3], [1, 2, 3, 2], ListSide.new),
        ([1, 2, 3], [3, 1, 2, 3], ListSide.new),
        ([1, 2, 3, 4], [4, 1, 2, 3, 1], ListSide.new),
    ])
    func duplicates(old: [Int], new: [Int], side: ListSide) {
        #expect {
            _ = try ListDiffer.diff(from: [TestItem](ids: old), to: [TestItem](ids: new))
        } throws: { error in
            guard case .duplicateID(let id, let inList) = error as? ListDiffError else { return false }
            return inList == side && ["1", "2", "3"].contains(id) && "\(error)".contains("\(side.rawValue) list")
        }
    }

    @Test("a changed-key set that contradicts the lists is an error naming both items")
    func inconsistentChangedKeys() {
        #expect(throws: ListDiffError.unchangedKeysReordered("1", "2")) {
            _ = try ListDiffer.diff(
                from: [TestItem](ids: [1, 2, 3]), to: [TestItem](ids: [2, 1, 3]), orderKeyChanged: [3])
        }
    }
}

@Suite("Choosing the rows that stay")
struct FewestMovesTests {
    @Test("with explicit flags, more rows staying outweighs rows that did not go up")
    func explicitFlags() {
        // Positions in old order: a (down) at new 2, x1 (up) at new 0, x2 (up) at new 1: moving a
        // alone is fewer moves than moving x1 and x2.
        #expect(FewestMoves.select(newPositions: [20, 0, 10], wentUp: [false, true, true]) == [false, true, true])
        #expect(FewestMoves.select(newPositions: [20, 0, 10], wentUp: [false, false, false]) == [false, true, true])
        #expect(FewestMoves.select(newPositions: [], wentUp: []) == [])
    }

    @Test("with explicit flags, between equally few moves the row that went up moves")
    func explicitFlagsTie() {
        #expect(FewestMoves.select(newPositions: [5, 1], wentUp: [false, true]) == [true, false])
        #expect(FewestMoves.select(newPositions: [5, 1], wentUp: [true, false]) == [false, true])
        // Three chains of two; only one keeps both rows that did not go up.
        #expect(FewestMoves.select(newPositions: [3, 4, 1, 2], wentUp: [true, true, false, false])
            == [false, false, true, true])
    }

    @Test("improving a given chain chooses as well as choosing from scratch", arguments: [31, 32])
    func improvingAChain(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<300 {
            let count = Int.random(in: 0...300, using: &generator)
            var ranks = Array(0..<count)
            for _ in 0..<Int.random(in: 0...6, using: &generator) where count > 0 {
                ranks.insert(ranks.remove(at: Int.random(in: 0..<count, using: &generator)),
                             at: Int.random(in: 0..<count, using: &generator))
            }
            // A chain: greedily, the items above every earlier kept item, skipping some at random.
            var chain = [Bool](repeating: false, count: count)
            var last = -1
            for k in 0..<count where ranks[k] > last && Int.random(in: 0..<8, using: &generator) != 0 {
                chain[k] = true
                last = ranks[k]
            }
            func weight(_ stays: [Bool]) -> (Int, Int) {
                let kept = (0..<count).filter { stays[$0] }
                #expect(zip(kept, kept.dropFirst()).allSatisfy { ranks[$0] < ranks[$1] })
                return (kept.count, kept.filter { ranks[$0] >= $0 }.count)
            }
            #expect(weight(FewestMoves.select(newRanks: ranks, improving: chain)) == weight(FewestMoves.select(newRanks: ranks)))
        }
    }

    @Test("blind selection: the longest increasing run stays, the rows that went up move on ties")
    func blindSelection() {
        #expect(FewestMoves.select(newRanks: [1, 2, 3, 0]) == [true, true, true, false])
        #expect(FewestMoves.select(newRanks: [3, 0, 1, 2]) == [false, true, true, true])
        #expect(FewestMoves.select(newRanks: [1, 0]) == [true, false])
    }
}
