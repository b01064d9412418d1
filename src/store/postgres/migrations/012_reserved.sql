-- Reserved for another change of this round (it replaces this file when the branches are merged): migration numbers
-- must have no gaps, and 013 (conversation outcomes) follows it.
SELECT 1;
