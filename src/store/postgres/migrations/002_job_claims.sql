-- Reserved for issue 17's job-claims migration (developed on another branch, merged before issue 19's 003): the
-- migration runner wants 001, 002, 003 without gaps. At the merge this file is replaced by that branch's version.
SELECT 1;
