// The options of `dead-letters` (the list) and `dead-letters reprocess`, shown in one help.
import { integer } from './args.js';
import { ACCOUNT_OPTIONS, databaseOptions, flag, flagsOnly, FORMAT_OPTIONS, value } from './options.js';
import { PROJECT_HERE_OPTION } from './owner.js';

/** The list's options. */
export const LIST_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNT_OPTIONS,
  ...flagsOnly({
    limit: value({
      placeholder: '<n>',
      help: 'list: at most n of each',
      default: 1000,
      defaultHelp: '1000',
      parse: (text: string, name: string) => integer(name, text, 1000, 1),
    }),
  }),
  ...FORMAT_OPTIONS,
};

/** What `reprocess` takes besides the database and the format. */
export const REPROCESS_ONLY_OPTIONS = flagsOnly({
  all: flag({ help: 'reprocess: every event dead letter' }),
  'project-here': { ...PROJECT_HERE_OPTION, help: `reprocess: ${PROJECT_HERE_OPTION.help}` },
});
