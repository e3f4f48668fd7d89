export const TEMPLATE_DATABASE = 'tally_test_template';
