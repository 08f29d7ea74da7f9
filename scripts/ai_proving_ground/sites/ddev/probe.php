<?php

/**
 * @file
 * ai_proving_ground state probe: answers one batch of questions as one JSON line.
 *
 * Run inside Drupal by the ddev site driver:
 *   drush php:script /var/www/html/<path>/probe.php --script-path=<dir> -- <request>
 * <request> is the question batch as base64-encoded JSON, or "@<container path>" naming a
 * JSON file when the batch is too large for one argument. Drush includes this file inside
 * its command, so the arguments arrive in $extra.
 *
 * The answer's keys mirror ai_proving_ground.sites.base.StateAnswer. Any exception ends the
 * command with drush's "[error]" log line and a non-zero exit, which the driver reports.
 * Success falls through without exit(): drush treats an explicit exit as abnormal
 * termination and collapses its code to 1.
 *
 * Everything lives in an anonymous class so that including the file defines no global
 * function and cannot collide with site code.
 */

use Drupal\Core\Entity\ContentEntityInterface;
use Drupal\Core\Entity\EntityChangedInterface;
use Drupal\Core\Entity\EntityInterface;
use Drupal\Core\Entity\EntityPublishedInterface;
use Drupal\Core\Field\FieldItemInterface;
use Drupal\Core\Field\FieldItemListInterface;
use Drupal\Core\TypedData\PrimitiveInterface;
use Drupal\user\UserInterface;

$apg_probe = new class {

  /**
   * Content entity types that entity and UUID look-ups search, in order.
   */
  private const UUID_ENTITY_TYPES = [
    'node',
    'canvas_page',
    'taxonomy_term',
    'user',
    'media',
    'block_content',
  ];

  /**
   * Base fields that entity records report besides the configurable ones.
   */
  private const REPORTED_BASE_FIELDS = ['title', 'status'];

  /**
   * Field types whose items point at another entity.
   */
  private const REFERENCE_TYPES = ['entity_reference', 'file', 'image'];

  /**
   * Reads the request from drush's $extra arguments.
   */
  public function request(array $extra): array {
    $argument = (string) ($extra[0] ?? '');
    if ($argument === '') {
      throw new \InvalidArgumentException('APG probe: no request argument after "--".');
    }
    if ($argument[0] === '@') {
      $json = file_get_contents(substr($argument, 1));
      if ($json === FALSE) {
        throw new \RuntimeException('APG probe: cannot read request file ' . substr($argument, 1));
      }
    }
    else {
      $json = base64_decode($argument, TRUE);
      if ($json === FALSE) {
        throw new \InvalidArgumentException('APG probe: the request is not valid base64.');
      }
    }
    $request = json_decode($json, TRUE, 512, JSON_THROW_ON_ERROR);
    if (!is_array($request)) {
      throw new \InvalidArgumentException('APG probe: the request is not a JSON object.');
    }
    return $request;
  }

  /**
   * Answers every question in the request.
   */
  public function answer(array $q): array {
    $answer = [
      'modules' => !empty($q['modules']) ? $this->modules() : [],
      'config' => $this->config($q['config'] ?? []),
      'config_names' => $this->configNames($q['config_prefixes'] ?? []),
      'entities' => $this->entities($q['entities'] ?? []),
      'counts' => array_map($this->countQuery(...), $q['counts'] ?? []),
      'views' => array_map($this->view(...), $q['views'] ?? []),
      'canvas' => array_map($this->canvas(...), $q['canvas'] ?? []),
      'pages' => array_map($this->page(...), $q['pages'] ?? []),
      'menus' => $this->menus($q['menus'] ?? []),
      'pending_updates' => !empty($q['pending_updates']) ? $this->pendingUpdates() : [],
      'versions' => !empty($q['versions']) ? $this->versions() : NULL,
    ];
    if (isset($q['content_export'])) {
      $answer['content_export'] = $this->contentExport($q['content_export']);
    }
    if (isset($q['entity_update'])) {
      $answer['entity_update'] = $this->entityUpdate($q['entity_update']);
    }
    if (isset($q['entity_create'])) {
      $answer['entity_create'] = $this->entityCreate($q['entity_create']);
    }
    // Empty maps must stay JSON objects, not lists.
    foreach (['modules', 'config', 'config_names', 'entities', 'menus'] as $key) {
      $answer[$key] = (object) $answer[$key];
    }
    return $answer;
  }

  // ------------------------------------------------------------------ modules

  private function modules(): array {
    $handler = \Drupal::moduleHandler();
    $registry = $this->updateHookRegistry();
    $this->loadInstallFiles();
    $modules = [];
    foreach (\Drupal::service('extension.list.module')->getList() as $name => $extension) {
      $info = $extension->info ?? [];
      $enabled = $handler->moduleExists($name);
      $modules[$name] = [
        'name' => $name,
        'enabled' => $enabled,
        'version' => isset($info['version']) ? (string) $info['version'] : NULL,
        'package' => isset($info['package']) ? (string) $info['package'] : NULL,
        'path' => $extension->getPath(),
        'schema_installed' => $enabled ? $this->installedSchema($registry, $name) : NULL,
        'schema_code' => $enabled ? $this->codeSchema($registry, $name) : NULL,
      ];
    }
    ksort($modules);
    return $modules;
  }

  private function updateHookRegistry(): ?object {
    return \Drupal::hasService('update.update_hook_registry')
      ? \Drupal::service('update.update_hook_registry')
      : NULL;
  }

  private function installedSchema(?object $registry, string $module): ?int {
    if ($registry === NULL) {
      return NULL;
    }
    $version = (int) $registry->getInstalledVersion($module);
    // -1 is SCHEMA_UNINSTALLED; 0 means "installed, no update hook has run".
    return $version < 0 ? NULL : $version;
  }

  private function codeSchema(?object $registry, string $module): ?int {
    if ($registry === NULL || !method_exists($registry, 'getAvailableUpdates')) {
      return NULL;
    }
    $available = $registry->getAvailableUpdates($module);
    return $available ? (int) max($available) : NULL;
  }

  /**
   * Loads every installed module's .install file, as update.php does.
   *
   * hook_update_N() implementations live there; update discovery only sees loaded ones.
   */
  private function loadInstallFiles(): void {
    require_once DRUPAL_ROOT . '/core/includes/install.inc';
    if (function_exists('drupal_load_updates')) {
      drupal_load_updates();
    }
    else {
      \Drupal::moduleHandler()->loadAllIncludes('install');
    }
  }

  // ------------------------------------------------------------------- config

  private function config(array $names): array {
    $factory = \Drupal::configFactory();
    $out = [];
    foreach ($names as $name) {
      $config = $factory->get((string) $name);
      // getRawData() is the stored object, without settings.php overrides.
      $out[$name] = $config->isNew() ? NULL : $config->getRawData();
    }
    return $out;
  }

  private function configNames(array $prefixes): array {
    $factory = \Drupal::configFactory();
    $out = [];
    foreach ($prefixes as $prefix) {
      $names = $factory->listAll((string) $prefix);
      sort($names);
      $out[$prefix] = $names;
    }
    return $out;
  }

  // ----------------------------------------------------------------- entities

  private function entities(array $uuids): array {
    $out = array_fill_keys(array_map('strval', $uuids), NULL);
    foreach ($this->loadByUuids(array_keys($out)) as $uuid => $entity) {
      $out[$uuid] = $this->record($entity);
    }
    return $out;
  }

  /**
   * Loads entities by UUID with one query per candidate entity type.
   *
   * @return \Drupal\Core\Entity\ContentEntityInterface[]
   *   Keyed by UUID; UUIDs that resolve nowhere are absent.
   */
  private function loadByUuids(array $uuids, ?array $types = NULL): array {
    $manager = \Drupal::entityTypeManager();
    $found = [];
    $missing = $uuids;
    foreach ($types ?? self::UUID_ENTITY_TYPES as $type_id) {
      if (!$missing || !$manager->hasDefinition($type_id)) {
        continue;
      }
      $uuid_key = $manager->getDefinition($type_id)->getKey('uuid');
      if (!$uuid_key) {
        continue;
      }
      foreach (array_chunk($missing, 500) as $chunk) {
        $entities = $manager->getStorage($type_id)->loadByProperties([$uuid_key => $chunk]);
        foreach ($entities as $entity) {
          $found[$entity->uuid()] = $entity;
        }
      }
      $missing = array_values(array_diff($missing, array_keys($found)));
    }
    return $found;
  }

  private function record(ContentEntityInterface $entity): array {
    $fields = [];
    foreach ($entity->getFieldDefinitions() as $name => $definition) {
      $is_base = $definition->getFieldStorageDefinition()->isBaseField();
      if ($is_base && !in_array($name, self::REPORTED_BASE_FIELDS, TRUE)) {
        continue;
      }
      $fields[$name] = $this->fieldItems($entity->get($name));
    }
    ksort($fields);
    return [
      'entity_type' => $entity->getEntityTypeId(),
      'uuid' => $entity->uuid(),
      'id' => (int) $entity->id(),
      'bundle' => $entity->bundle(),
      'label' => (string) $entity->label(),
      'status' => $this->status($entity),
      'fields' => (object) $fields,
      'created' => $entity->hasField('created') ? (int) $entity->get('created')->value : 0,
      'changed' => $entity instanceof EntityChangedInterface ? (int) $entity->getChangedTime() : 0,
    ];
  }

  private function status(EntityInterface $entity): bool {
    if ($entity instanceof EntityPublishedInterface) {
      return $entity->isPublished();
    }
    if ($entity instanceof UserInterface) {
      return $entity->isActive();
    }
    return TRUE;
  }

  /**
   * Field items as stored, each value cast to its declared type; references carry the UUID.
   */
  private function fieldItems(FieldItemListInterface $items): array {
    $is_reference = in_array($items->getFieldDefinition()->getType(), self::REFERENCE_TYPES, TRUE);
    $values = [];
    foreach ($items as $delta => $item) {
      $values[$delta] = $this->castItem($item);
      if ($is_reference) {
        $target = $item->get('entity')->getValue();
        if ($target instanceof EntityInterface && $target->uuid()) {
          $values[$delta]['target_uuid'] = $target->uuid();
        }
      }
    }
    return $this->emptyMapsAsObjects(array_values($values));
  }

  /**
   * One item's stored values, cast as core's content exporter casts them.
   *
   * Every Drupal database driver fetches stored values as strings (PDO's
   * ATTR_STRINGIFY_FETCHES), so an integer field reads "3". Core's exporter
   * (DefaultContent\Exporter::exportFieldItem) and REST cast each primitive
   * property with getCastedValue(); so does the probe, for the stored ones.
   */
  public function castItem(FieldItemInterface $item): array {
    $values = $item->getValue();
    foreach ($item->getProperties() as $name => $property) {
      if (array_key_exists($name, $values) && $values[$name] !== NULL
        && $property instanceof PrimitiveInterface) {
        $values[$name] = $property->getCastedValue();
      }
    }
    return $values;
  }

  /**
   * Empty arrays written as JSON objects, as core's YAML export writes them ({  }).
   *
   * PHP cannot tell an empty list from an empty map; Drupal's stored item values
   * and exported documents are maps, so an empty one must not arrive as [].
   */
  public function emptyMapsAsObjects(array $value): array {
    foreach ($value as $key => $item) {
      if (is_array($item)) {
        $value[$key] = $item === [] ? new \stdClass() : $this->emptyMapsAsObjects($item);
      }
    }
    return $value;
  }

  // ------------------------------------------------------------------- counts

  private function countQuery(array $question): int {
    $manager = \Drupal::entityTypeManager();
    $type_id = (string) $question['entity_type'];
    if (!$manager->hasDefinition($type_id)) {
      // No entity of a type the site does not define can match.
      return 0;
    }
    $type = $manager->getDefinition($type_id);
    $query = $manager->getStorage($type_id)->getQuery()->accessCheck(FALSE);
    if (($question['bundle'] ?? NULL) !== NULL && $type->hasKey('bundle')) {
      $query->condition($type->getKey('bundle'), $question['bundle']);
    }
    $storage_fields = \Drupal::service('entity_field.manager')->getFieldStorageDefinitions($type_id);
    foreach ($question['conditions'] ?? [] as $condition) {
      $field = $this->conditionField($type, (string) $condition['field']);
      $operator = strtoupper((string) ($condition['operator'] ?? '='));
      $operator = $operator === '!=' ? '<>' : $operator;
      if (!isset($storage_fields[explode('.', $field)[0]])) {
        // A field the site lacks holds no value: "is empty" holds for every entity,
        // anything else for none.
        if ($operator === 'IS NULL') {
          continue;
        }
        return 0;
      }
      if ($operator === 'IS NULL') {
        $query->notExists($field);
      }
      elseif ($operator === 'IS NOT NULL') {
        $query->exists($field);
      }
      else {
        $query->condition($field, $condition['value'] ?? NULL, $operator);
      }
    }
    return (int) $query->count()->execute();
  }

  /**
   * Maps the generic names (label, status, bundle) onto the entity type's keys.
   */
  private function conditionField(object $type, string $field): string {
    $keys = ['label' => 'label', 'status' => 'published', 'bundle' => 'bundle'];
    if (isset($keys[$field]) && $type->hasKey($keys[$field])) {
      return $type->getKey($keys[$field]);
    }
    // Users have no label key: their label is the name (User::label()), and the
    // published key is "status" on the account.
    if ($type->id() === 'user' && isset(['label' => 1, 'status' => 1][$field])) {
      return $field === 'label' ? 'name' : 'status';
    }
    return $field;
  }

  // -------------------------------------------------------------------- views

  private function view(array $question): array {
    $view_id = (string) $question['view_id'];
    $display_id = (string) ($question['display_id'] ?? 'default');
    // What a visitor of the display gets, worded as the embedded site words it (ViewResult).
    $result = [
      'view_id' => $view_id,
      'display_id' => $display_id,
      'rows' => [],
      'total_rows' => 0,
      'error' => NULL,
      'outcome' => 'no such view or display',
      'messages' => [],
      'broken' => [],
      'ties' => [],
    ];
    try {
      $view = \Drupal\views\Views::getView($view_id);
      if ($view === NULL) {
        $result['error'] = "view $view_id does not exist";
        return $result;
      }
      if (!$view->storage->status()) {
        // A disabled view serves no page or block, whatever its config says.
        $result['error'] = "view $view_id is disabled";
        $page = ($view->storage->getDisplay($display_id)['display_plugin'] ?? '') === 'page';
        $result['outcome'] = $page ? 'not served (disabled: page path 404)' : 'not served (disabled)';
        return $result;
      }
      if (!$view->setDisplay($display_id)) {
        $result['error'] = "view $view_id has no display $display_id";
        return $result;
      }
      if ($display_id !== 'default' && !$view->display_handler->isEnabled()) {
        // A disabled display makes no route: its page path is a 404 whatever its rows.
        $result['error'] = "display $display_id is disabled";
        $page = ($view->storage->getDisplay($display_id)['display_plugin'] ?? '') === 'page';
        $result['outcome'] = $page ? 'not served (display disabled: page path 404)' : 'not served (display disabled)';
        return $result;
      }
      // Views drops a broken handler and executes anyway; validate() is where Drupal says so.
      // It changes the handlers it checks, so it runs on an instance of its own.
      $result['messages'] = $this->viewMessages($view_id, $display_id);
      $result['broken'] = $this->brokenHandlers($view);
      // Contextual filter values, as in /path/arg1/arg2.
      $view->setArguments(array_map('strval', $question['arguments'] ?? []));
      // What a visitor typed in the exposed form (?product=api), as [name, value] pairs. Only
      // when some is given: an empty input makes Views read the request's query instead.
      $input = [];
      foreach ($question['exposed'] ?? [] as $pair) {
        $input[(string) $pair[0]] = (string) $pair[1];
      }
      if ($input) {
        $view->setExposedInput($input);
      }
      // The pager's page (?page=1); a pager without links ignores it, as its query() does.
      if ((int) ($question['page'] ?? 0) > 0) {
        $view->setCurrentPage((int) $question['page']);
      }
      $view->preExecute();
      $view->execute();
      foreach ($view->result as $row) {
        $result['rows'][] = $this->viewRow($view, $row);
      }
      $result['total_rows'] = (int) ($view->total_rows ?? count($result['rows']));
      $result['outcome'] = $this->viewOutcome($view, $result['broken']);
      $result['ties'] = $this->sortTies($view);
      $view->destroy();
    }
    catch (\Throwable $e) {
      $result['rows'] = [];
      $result['error'] = get_class($e) . ': ' . $e->getMessage();
      $result['outcome'] = 'exception';
    }
    return $result;
  }

  /**
   * A failed contextual filter serves 404 or 403; a Broken field handler fails the render.
   */
  private function viewOutcome(object $view, array $broken): string {
    if (!empty($view->build_info['fail'])) {
      return 'not served (404)';
    }
    if (!empty($view->build_info['denied'])) {
      return 'not served (403)';
    }
    foreach ($broken as $handler) {
      if (str_starts_with($handler, 'field.')) {
        return 'render error (HTTP 500)';
      }
    }
    return 'rows';
  }

  /**
   * Runs [start, end) of result rows of two or more entities whose ORDER BY values are equal:
   * their order is the database's.
   */
  private function sortTies(object $view): array {
    $aliases = array_column($view->query->orderby ?? [], 'field');
    $runs = [];
    $start = 0;
    $rows = array_values($view->result);
    $key = fn ($row) => array_map(fn ($alias) => $row->{$alias} ?? NULL, $aliases);
    for ($index = 1; $index <= count($rows); $index++) {
      if ($index === count($rows) || $key($rows[$index]) !== $key($rows[$start])) {
        $ids = array_map(fn ($row) => $this->viewRow($view, $row)['id'], array_slice($rows, $start, $index - $start));
        if (count(array_unique($ids)) > 1) {
          $runs[] = [$start, $index];
        }
        $start = $index;
      }
    }
    return $runs;
  }

  /**
   * ViewExecutable::validate()'s messages for one view, as "display_id: message".
   */
  private function viewMessages(string $view_id, string $display_id): array {
    $check = \Drupal\views\Views::getView($view_id);
    if ($check === NULL || !$check->setDisplay($display_id)) {
      return [];
    }
    $messages = [];
    foreach ($check->validate() as $display => $errors) {
      foreach ((array) $errors as $error) {
        $messages[] = $display . ': ' . $error;
      }
    }
    $check->destroy();
    return $messages;
  }

  /**
   * Handlers of the display that Views replaced with its Broken plugin, as "type.id".
   */
  private function brokenHandlers(object $view): array {
    $broken = [];
    foreach (['filter', 'sort', 'field', 'argument', 'relationship'] as $type) {
      foreach ($view->display_handler->getHandlers($type) as $id => $handler) {
        if (method_exists($handler, 'broken') && $handler->broken()) {
          $broken[] = "$type.$id";
        }
      }
    }
    return $broken;
  }

  private function viewRow(object $view, object $row): array {
    $entity = $row->_entity ?? NULL;
    if ($entity instanceof EntityInterface) {
      return [
        'id' => (int) $entity->id(),
        'uuid' => (string) $entity->uuid(),
        'label' => (string) $entity->label(),
      ];
    }
    // A base table without an entity: the base field is all there is.
    $base_field = $view->storage->get('base_field');
    return ['id' => (int) ($row->{$base_field} ?? 0), 'uuid' => '', 'label' => ''];
  }

  // -------------------------------------------------------------------- pages

  /**
   * What an anonymous visitor of a path gets, worded as the embedded site words it (PageResult).
   *
   * The alias is resolved first, as Drupal's inbound path processing does, so an alias's
   * entity is served whatever view also claims the path. Views routes that match the path
   * follow, in the order the router tries them (RouteProvider sorts candidates by fit, then
   * name); a view makes a route only for an enabled page display of an enabled view. A route's
   * placeholder (a view path's %, {arg_0} in the route) matches one part of the path, which is
   * the display's contextual argument; only the routes of the best fit claim the path (a route
   * with more literal parts shadows a placeholder one: the router never tries the latter).
   */
  public function page(array $question): array {
    $path = '/' . trim((string) ($question['path'] ?? ''), '/');
    $result = ['path' => $path, 'claims' => [], 'served' => NULL,
      'outcome' => 'not served (404)', 'rows' => [], 'error' => NULL];
    $target = NULL;
    // Without the path_alias module a site has no aliases: the path is the system path.
    $system = \Drupal::hasService('path_alias.manager')
      ? \Drupal::service('path_alias.manager')->getPathByAlias($path)
      : $path;
    if ($system !== $path) {
      $target = $this->routedEntity($system);
      if ($target !== NULL) {
        $result['claims'][] = $target->getEntityTypeId() . ':' . $target->uuid();
      }
    }
    $arguments = [];
    $best = NULL;
    foreach (\Drupal::service('router.route_provider')->getRoutesByPattern($path) as $route) {
      $view_id = $route->getDefault('view_id');
      $display_id = $route->getDefault('display_id');
      $matched = $view_id !== NULL && $display_id !== NULL
        ? $this->routeArguments($route->getPath(), $path) : NULL;
      if ($matched === NULL) {
        continue;
      }
      $fit = $this->routeFit($route->getPath());
      if ($best !== NULL && $fit < $best) {
        continue;
      }
      if ($best === NULL || $fit > $best) {
        $result['claims'] = $target !== NULL ? [$result['claims'][0]] : [];
        $arguments = [];
        $best = $fit;
      }
      $result['claims'][] = "view:$view_id/$display_id";
      $arguments["view:$view_id/$display_id"] = $matched;
    }
    if (!$result['claims']) {
      return $result;
    }
    $result['served'] = $result['claims'][0];
    if ($target !== NULL) {
      $anonymous = \Drupal\user\Entity\User::getAnonymousUser();
      $result['outcome'] = $target->access('view', $anonymous) ? 'entity' : 'not served (403)';
      return $result;
    }
    [$view_id, $display_id] = explode('/', substr($result['served'], strlen('view:')), 2);
    $view = $this->view(['view_id' => $view_id, 'display_id' => $display_id,
      'arguments' => $arguments[$result['served']] ?? []]);
    $result['outcome'] = $view['outcome'];
    $result['rows'] = $view['rows'];
    $result['error'] = $view['error'];
    return $result;
  }

  /**
   * The path's parts that a route's placeholders take, in order, or NULL when the route does not
   * match the path (a literal part differs, or the part counts differ).
   */
  private function routeArguments(string $pattern, string $path): ?array {
    $want = explode('/', trim($pattern, '/'));
    $have = explode('/', trim($path, '/'));
    if (count($want) !== count($have)) {
      return NULL;
    }
    $arguments = [];
    foreach ($want as $index => $part) {
      if (str_starts_with($part, '{') && str_ends_with($part, '}')) {
        if ($have[$index] === '') {
          return NULL;
        }
        $arguments[] = $have[$index];
      }
      elseif ($part !== $have[$index]) {
        return NULL;
      }
    }
    return $arguments;
  }

  /**
   * A route's fit as Drupal's RouteCompiler::getFit() counts it: a 1 bit for each literal part.
   */
  private function routeFit(string $pattern): int {
    $parts = explode('/', trim($pattern, '/'));
    $fit = 0;
    foreach ($parts as $index => $part) {
      if (!str_contains($part, '{')) {
        $fit |= 1 << (count($parts) - 1 - $index);
      }
    }
    return $fit;
  }

  /**
   * The entity a system path (such as /page/1) routes to, from the matched route's parameters.
   */
  private function routedEntity(string $system): ?ContentEntityInterface {
    try {
      $match = \Drupal::service('router.no_access_checks')->match($system);
    }
    catch (\Exception $e) {
      return NULL;
    }
    foreach ($match as $value) {
      if ($value instanceof ContentEntityInterface) {
        return $value;
      }
    }
    return NULL;
  }

  // -------------------------------------------------------------------- menus

  /**
   * Each menu by id (NULL when there is none): its label and every menu_link_content entity
   * saved in it, by id, each link's URI resolved to where a click leads.
   */
  private function menus(array $menu_ids): array {
    $manager = \Drupal::entityTypeManager();
    $out = [];
    foreach (array_map('strval', $menu_ids) as $menu_id) {
      $menu = $manager->getStorage('menu')->load($menu_id);
      if ($menu === NULL) {
        $out[$menu_id] = NULL;
        continue;
      }
      $links = [];
      if ($manager->hasDefinition('menu_link_content')) {
        $storage = $manager->getStorage('menu_link_content');
        $ids = $storage->getQuery()->accessCheck(FALSE)->condition('menu_name', $menu_id)
          ->sort('id')->execute();
        foreach ($ids ? $storage->loadMultiple($ids) : [] as $link) {
          $uri = (string) $link->get('link')->uri;
          $links[] = [
            'uuid' => $link->uuid(),
            'title' => (string) $link->getTitle(),
            'uri' => $uri,
            'target' => $this->linkTarget($uri),
            'parent' => (string) $link->getParentId(),
            'weight' => (int) $link->getWeight(),
            'enabled' => (bool) $link->isEnabled(),
            'expanded' => (bool) $link->isExpanded(),
          ];
        }
      }
      $out[$menu_id] = ['menu_id' => $menu_id, 'label' => (string) $menu->label(),
        'links' => $links];
    }
    return $out;
  }

  /**
   * Where a link's URI leads, in sites.menus.MenuLink's words: <front>; an entity's route as
   * TYPE:UUID (TYPE/ID when it does not exist); a view page as view:ID/DISPLAY; an internal
   * path nothing routes as the path; any other route as route:NAME; anything else as given.
   */
  public function linkTarget(string $uri): string {
    if (in_array($uri, ['route:<front>', 'internal:/', 'internal:<front>'], TRUE)) {
      return '<front>';
    }
    try {
      $url = \Drupal\Core\Url::fromUri($uri);
    }
    catch (\InvalidArgumentException $e) {
      return $uri;
    }
    if ($url->isExternal()) {
      return $uri;
    }
    if (!$url->isRouted()) {
      $path = (string) parse_url(substr($url->getUri(), strlen('base:')), PHP_URL_PATH);
      return '/' . trim($path, '/');
    }
    $route = $url->getRouteName();
    $parameters = $url->getRouteParameters();
    if ($route === '<front>') {
      return '<front>';
    }
    if (preg_match('/^entity\.([a-z0-9_]+)\.canonical$/', $route, $match)
      && isset($parameters[$match[1]])) {
      $entity = \Drupal::entityTypeManager()->getStorage($match[1])->load($parameters[$match[1]]);
      return $entity !== NULL ? $match[1] . ':' . $entity->uuid() : $match[1] . '/' . $parameters[$match[1]];
    }
    if (preg_match('/^view\.([^.]+)\.(.+)$/', $route, $match)) {
      return "view:{$match[1]}/{$match[2]}";
    }
    return 'route:' . $route;
  }

  // ------------------------------------------------------------ entity update

  /**
   * apg's entity:update, which drush lacks (apg drush runs it here): one entity by id or UUID.
   */
  private function entityUpdate(array $update): array {
    $type_id = (string) ($update['entity_type'] ?? '');
    $target = (string) ($update['target'] ?? '');
    $manager = \Drupal::entityTypeManager();
    $entity = NULL;
    if ($manager->hasDefinition($type_id)) {
      $entity = ctype_digit($target)
        ? $manager->getStorage($type_id)->load($target)
        : ($this->loadByUuids([$target], [$type_id])[$target] ?? NULL);
    }
    if (!$entity instanceof ContentEntityInterface) {
      throw new \InvalidArgumentException("APG probe: no $type_id entity with id or uuid $target.");
    }
    return $this->updateEntity($entity, (array) ($update['values'] ?? []));
  }

  /**
   * apg's entity:create (drush's asks for each field): a new entity made by its storage's
   * create(), its bundle and UUID given there, then its values set and saved as entity:update
   * sets them.
   */
  private function entityCreate(array $create): array {
    $type_id = (string) ($create['entity_type'] ?? '');
    $manager = \Drupal::entityTypeManager();
    if (!$manager->hasDefinition($type_id)) {
      throw new \InvalidArgumentException("APG probe: no entity type $type_id.");
    }
    $initial = [];
    $bundle_key = $manager->getDefinition($type_id)->getKey('bundle');
    if ($bundle_key && isset($create['bundle'])) {
      $initial[$bundle_key] = (string) $create['bundle'];
    }
    if (!empty($create['uuid'])) {
      $initial['uuid'] = (string) $create['uuid'];
    }
    $entity = $manager->getStorage($type_id)->create($initial);
    if (!$entity instanceof ContentEntityInterface) {
      throw new \InvalidArgumentException("APG probe: $type_id is not a content entity type.");
    }
    return $this->updateEntity($entity, (array) ($create['values'] ?? []));
  }

  /**
   * Merges field values into an entity, as apg site's entity:update does, and saves it.
   *
   * Each field is set as core's default-content importer sets it ($entity->set()). A field
   * the bundle lacks, or a violation on a field set, refuses the update before anything is saved.
   */
  public function updateEntity(ContentEntityInterface $entity, array $values): array {
    foreach ($values as $name => $value) {
      if (!$entity->hasField((string) $name)) {
        throw new \InvalidArgumentException(sprintf('APG probe: %s %s has no field %s.',
          $entity->getEntityTypeId(), $entity->bundle(), $name));
      }
      $entity->set((string) $name, $value);
    }
    $problems = [];
    foreach ($entity->validate() as $violation) {
      $path = (string) $violation->getPropertyPath();
      if (array_key_exists(explode('.', $path)[0], $values)) {
        $problems[] = $path . ': ' . strip_tags((string) $violation->getMessage());
      }
    }
    if ($problems) {
      throw new \InvalidArgumentException('APG probe: the values are invalid: ' . implode('; ', $problems));
    }
    $entity->save();
    // What apg site's entity commands print of an entity.
    return [
      'id' => (int) $entity->id(),
      'uuid' => $entity->uuid(),
      'bundle' => $entity->bundle(),
      'label' => (string) $entity->label(),
    ];
  }

  // ------------------------------------------------------------------- canvas

  private function canvas(array $ref): ?array {
    $kind = (string) ($ref['kind'] ?? '');
    $key = (string) ($ref['key'] ?? '');
    if ($kind === 'page') {
      return $this->canvasPage($key);
    }
    if ($kind === 'region') {
      return $this->canvasRegion($key);
    }
    return NULL;
  }

  private function canvasPage(string $uuid): ?array {
    $page = $this->loadByUuids([$uuid], ['canvas_page'])[$uuid] ?? NULL;
    if ($page === NULL || !$page->hasField('components')) {
      return NULL;
    }
    return [
      'kind' => 'page',
      'key' => $uuid,
      'label' => (string) $page->label(),
      'components' => $this->componentItems($page->get('components')->getValue()),
      'status' => $this->status($page),
    ];
  }

  private function canvasRegion(string $name): ?array {
    $config = \Drupal::configFactory()->get($name);
    if ($config->isNew()) {
      return NULL;
    }
    $data = $config->getRawData();
    return [
      'kind' => 'region',
      'key' => $name,
      'label' => (string) ($data['region'] ?? $name),
      'components' => $this->componentItems($data['component_tree'] ?? []),
      // A disabled page region renders nothing.
      'status' => !empty($data['status'] ?? TRUE),
    ];
  }

  private function componentItems(array $items): array {
    $out = [];
    foreach (array_values($items) as $item) {
      $inputs = $item['inputs'] ?? [];
      // Field items store inputs as a JSON string; region config stores a mapping.
      if (is_string($inputs)) {
        $inputs = $inputs === '' ? [] : json_decode($inputs, TRUE, 512, JSON_THROW_ON_ERROR);
      }
      $out[] = [
        'uuid' => (string) ($item['uuid'] ?? ''),
        'component_id' => (string) ($item['component_id'] ?? ''),
        'parent_uuid' => isset($item['parent_uuid']) ? (string) $item['parent_uuid'] : NULL,
        'slot' => isset($item['slot']) ? (string) $item['slot'] : NULL,
        'inputs' => (object) ($inputs ?? []),
      ];
    }
    return $out;
  }

  // ------------------------------------------------------- updates, versions

  /**
   * Pending hook_update_N() and post-update functions, as drush updatedb:status lists them.
   */
  private function pendingUpdates(): array {
    $this->loadInstallFiles();
    require_once DRUPAL_ROOT . '/core/includes/update.inc';
    $pending = [];
    foreach (update_get_update_list() as $module => $updates) {
      foreach ($updates['pending'] ?? [] as $update_id => $description) {
        $pending[] = [
          'module' => (string) $module,
          'update_id' => (string) $update_id,
          'description' => trim(str_replace($update_id . ' - ', '', (string) $description)),
        ];
      }
    }
    $post = \Drupal::service('update.post_update_registry')->getPendingUpdateInformation();
    foreach ($post as $module => $info) {
      foreach ($info['pending'] ?? [] as $name => $description) {
        $pending[] = [
          'module' => (string) $module,
          'update_id' => (string) $name,
          'description' => trim((string) $description),
        ];
      }
    }
    return $pending;
  }

  private function versions(): array {
    $registry = $this->updateHookRegistry();
    $modules = [];
    $schema = [];
    $list = \Drupal::service('extension.list.module');
    foreach (\Drupal::moduleHandler()->getModuleList() as $name => $extension) {
      $info = $list->getExtensionInfo($name);
      $package = $this->composerPackage($name, $extension->getPath(), $info);
      $modules[$name] = [
        'package' => $package,
        'version' => isset($info['version']) ? (string) $info['version'] : NULL,
        'source_reference' => $package === NULL ? NULL : $this->composerReference($package),
      ];
      $schema[$name] = $this->installedSchema($registry, $name);
    }
    ksort($modules);
    ksort($schema);
    $runtime = ['php' => PHP_VERSION];
    $database = \Drupal::database();
    $runtime['database'] = $database->driver() . ' ' . $database->version();
    if (class_exists('Drush\Drush')) {
      $runtime['drush'] = (string) \Drush\Drush::getVersion();
    }
    return [
      'core' => \Drupal::VERSION,
      'runtime' => $runtime,
      'modules' => (object) $modules,
      'schema' => (object) $schema,
    ];
  }

  /**
   * The Composer package a module ships in: drupal/core for core's, else its project's.
   */
  private function composerPackage(string $name, string $path, array $info): ?string {
    if (str_starts_with($path, 'core/')) {
      return 'drupal/core';
    }
    $project = isset($info['project']) ? (string) $info['project'] : $name;
    $package = "drupal/$project";
    if (class_exists('Composer\InstalledVersions')
      && \Composer\InstalledVersions::isInstalled($package)) {
      return $package;
    }
    return NULL;
  }

  /**
   * The installed package's source reference (a git SHA or tag), when Composer knows it.
   */
  private function composerReference(string $package): ?string {
    if (!class_exists('Composer\InstalledVersions')
      || !\Composer\InstalledVersions::isInstalled($package)) {
      return NULL;
    }
    return \Composer\InstalledVersions::getReference($package);
  }

  // ----------------------------------------------------------- content export

  private function contentExport(array $selectors): array {
    $documents = [];
    foreach ($selectors as $selector) {
      foreach ($this->selectedEntities($selector) as $entity) {
        $documents[] = $this->exportEntity($entity);
      }
    }
    return $documents;
  }

  /**
   * @return \Drupal\Core\Entity\ContentEntityInterface[]
   */
  private function selectedEntities(array $selector): array {
    $manager = \Drupal::entityTypeManager();
    $type_id = (string) $selector['entity_type'];
    if (!$manager->hasDefinition($type_id)) {
      return [];
    }
    $type = $manager->getDefinition($type_id);
    $query = $manager->getStorage($type_id)->getQuery()->accessCheck(FALSE);
    if (($selector['bundle'] ?? NULL) !== NULL && $type->hasKey('bundle')) {
      $query->condition($type->getKey('bundle'), $selector['bundle']);
    }
    if (!empty($selector['uuids'])) {
      $query->condition($type->getKey('uuid'), array_values($selector['uuids']), 'IN');
    }
    $query->sort($type->getKey('id'));
    $ids = $query->execute();
    return $ids ? array_values($manager->getStorage($type_id)->loadMultiple($ids)) : [];
  }

  /**
   * One entity in core's default-content format (_meta + default [+ translations]).
   */
  private function exportEntity(ContentEntityInterface $entity): array {
    $exporter = 'Drupal\Core\DefaultContent\Exporter';
    if (class_exists($exporter) && \Drupal::hasService($exporter)) {
      // Core's own exporter (11.3+) is the reference for the format.
      $result = \Drupal::service($exporter)->export($entity);
      $document = ['_meta' => $result->metadata->get()] + $result->data;
    }
    else {
      $document = $this->exportEntityFallback($entity);
    }
    $document['default'] = (object) $this->emptyMapsAsObjects($document['default'] ?? []);
    return $document;
  }

  /**
   * Approximates core's exporter on sites older than 11.3.
   */
  private function exportEntityFallback(ContentEntityInterface $entity): array {
    $type = $entity->getEntityType();
    $meta = [
      'version' => '1.0',
      'entity_type' => $entity->getEntityTypeId(),
      'uuid' => $entity->uuid(),
    ];
    if ($type->hasKey('bundle')) {
      $meta['bundle'] = $entity->bundle();
    }
    if ($type->hasKey('langcode')) {
      $meta['default_langcode'] = $entity->language()->getId();
    }
    $skip = [];
    foreach (['id', 'uuid', 'revision', 'langcode', 'bundle', 'default_langcode'] as $key) {
      if ($type->hasKey($key)) {
        $skip[] = $type->getKey($key);
      }
    }
    // revision_default and revision_created are revision metadata keys, not entity keys.
    foreach (['revision_default', 'revision_created'] as $key) {
      if (method_exists($type, 'hasRevisionMetadataKey') && $type->hasRevisionMetadataKey($key)) {
        $skip[] = $type->getRevisionMetadataKey($key);
      }
    }
    $depends = [];
    $data = [];
    foreach ($entity->getFields() as $name => $items) {
      $definition = $items->getFieldDefinition();
      if (in_array($name, $skip, TRUE)
        || in_array($definition->getType(), ['changed', 'created'], TRUE)
        || $definition->isComputed()
        || $items->isEmpty()) {
        continue;
      }
      $is_reference = in_array($definition->getType(), self::REFERENCE_TYPES, TRUE);
      foreach ($items as $item) {
        $values = $this->castItem($item);
        if ($definition->getType() === 'password') {
          // The stored value is a hash: importing it must not hash it again.
          $values = ['value' => $values['value'] ?? NULL, 'pre_hashed' => TRUE];
        }
        if ($is_reference) {
          $target = $item->get('entity')->getValue();
          $values = $this->exportReference($entity, $target, $values, $depends);
          if ($values === NULL) {
            continue;
          }
        }
        $data[$name][] = $values;
      }
    }
    if ($depends) {
      $meta['depends'] = $depends;
    }
    return ['_meta' => $meta, 'default' => $data];
  }

  private function exportReference(EntityInterface $owner, ?EntityInterface $target, array $values, array &$depends): ?array {
    if ($target === NULL) {
      return NULL;
    }
    if ($target instanceof UserInterface && (int) $target->id() < 2) {
      // Users 0 and 1 exist on every site, so their serial IDs are portable.
      return array_map('intval', array_intersect_key($values, ['target_id' => TRUE]));
    }
    if ($target instanceof ContentEntityInterface && $target->uuid() !== $owner->uuid()) {
      // A content entity is referenced by UUID, as core's exporter does (serial IDs differ
      // per site). EntityTypeInterface::hasIntegerId() exists only from Drupal 11.4.
      $depends[$target->uuid()] = $target->getEntityTypeId();
      $values['entity'] = $target->uuid();
      unset($values['target_id'], $values['target_revision_id']);
    }
    return $values;
  }

};

$apg_request = $apg_probe->request($extra ?? []);
print json_encode(
  $apg_probe->answer($apg_request),
  JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION
    | JSON_INVALID_UTF8_SUBSTITUTE | JSON_THROW_ON_ERROR
) . "\n";
